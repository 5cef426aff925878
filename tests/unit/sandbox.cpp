#include "sandbox.hpp"

#include "path_rules.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sched.h>
#include <sstream>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sandbox {
namespace {

std::string mkdir_p(const std::string &path, mode_t mode) {
    std::string sofar;
    for (const auto &part : sjail::split_components(path)) {
        sofar += "/" + part;
        if (::mkdir(sofar.c_str(), 0755) != 0 && errno != EEXIST) {
            return "mkdir " + sofar + ": " + std::strerror(errno);
        }
    }
    if (::chmod(path.c_str(), mode) != 0) {
        return "chmod " + path + ": " + std::strerror(errno);
    }
    return "";
}

} // namespace

std::string in_child(const std::function<std::string()> &fn) {
    int fds[2];
    if (::pipe(fds) != 0) {
        return "pipe failed";
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        std::string result;
        try {
            result = fn();
        } catch (const std::exception &e) {
            result = std::string("exception: ") + e.what();
        }
        const ssize_t written = ::write(fds[1], result.data(), result.size());
        ::_exit(written == static_cast<ssize_t>(result.size()) ? 0 : 1);
    }
    ::close(fds[1]);
    std::string result;
    char buf[512];
    ssize_t n = 0;
    while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) {
        result.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return "child died (status " + std::to_string(status) + "): " + result;
    }
    return result;
}

std::string write_file(const std::string &path, const std::string &text) {
    std::ofstream out(path);
    out << text;
    return out ? "" : "cannot write " + path;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string make_layout(const std::string &base, sjail::Config &config) {
    const std::string jail = base + "/jail";
    const std::string node = base + "/node";
    for (const auto &dir : {"/proc", "/dev", "/sys", "/etc", "/opt/data", "/home"}) {
        if (auto e = mkdir_p(jail + dir, 0755); !e.empty()) {
            return e;
        }
    }
    // The jail's own copies of the node paths, so the binds have mount points.
    for (const auto &dir : {"/munge", "/conf", "/spool"}) {
        if (auto e = mkdir_p(jail + base + "/node" + dir, 0755); !e.empty()) {
            return e;
        }
    }
    if (auto e = mkdir_p(jail + "/tmp", 01777); !e.empty()) {
        return e;
    }
    for (const auto &dir : {"/munge", "/conf", "/spool", "/data"}) {
        if (auto e = mkdir_p(node + dir, 0755); !e.empty()) {
            return e;
        }
    }
    std::string e = write_file(jail + "/etc/slurm-jail-release", "JAIL");
    e += write_file(jail + "/etc/hosts", "");
    e += write_file(jail + "/etc/resolv.conf", "");
    e += write_file(node + "/data/hello", "hi");
    e += write_file(node + "/conf/slurm.conf", "ClusterName=test\n");
    e += write_file(base + "/host-only", "host");
    if (!e.empty()) {
        return e;
    }
    auto parsed = sjail::parse_config({"jail=" + jail, "munge=" + node + "/munge",
                                       "conf_dir=" + node + "/conf", "spool=" + node + "/spool",
                                       "tmp=" + node + "/tmp", "state=" + base + "/state",
                                       "bind=" + node + "/data:/opt/data:ro",
                                       // the host's own NVIDIA driver (on a GPU machine)
                                       // stays out of these jails; the GPU tests ask for theirs
                                       "gpu=off"});
    config = parsed.config;
    return parsed.status.message();
}

std::string make_node(sjail::Config &config) {
    if (::unshare(CLONE_NEWNS) != 0) {
        return std::string("unshare: ") + std::strerror(errno);
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
        return std::string("make-rslave /: ") + std::strerror(errno);
    }
    if (::mount("sandbox", "/mnt", "tmpfs", 0, "mode=0755") != 0) {
        return std::string("tmpfs on /mnt: ") + std::strerror(errno);
    }
    return make_layout("/mnt", config);
}

std::vector<std::string> mounts_below(const std::string &prefix) {
    std::ifstream in("/proc/self/mountinfo");
    std::vector<std::string> found;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string f;
        std::string mount_point;
        for (int i = 0; i < 5 && fields >> f; ++i) {
            mount_point = f;
        }
        if (sjail::is_same_or_below(mount_point, prefix)) {
            found.push_back(mount_point);
        }
    }
    return found;
}

} // namespace sandbox
