// SPDX-License-Identifier: Apache-2.0
#include "gpu_sandbox.hpp"

#include "ldconfig_fixture.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace gpu_sandbox {
namespace {

void copy_to(const std::string &from, const std::string &to) {
    fs::create_directories(fs::path(to).parent_path());
    fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

void link_to(const std::string &target, const std::string &link) {
    fs::create_directories(fs::path(link).parent_path());
    fs::create_symlink(target, link);
}

// Where the build architecture's programs ask for their loader (PT_INTERP),
// a link to kLoaderName in the multiarch directory as Debian's libc6 makes
// it: /lib64 on x86-64, /lib (usr/lib in a merged /usr) on arm64.
#if defined(__x86_64__)
const std::string kLoaderLink = std::string("/lib64/") + fixture::kLoaderName;
#elif defined(__aarch64__)
const std::string kLoaderLink = std::string("/lib/") + fixture::kLoaderName;
#endif

// The build architecture's ldconfig (under the emulator for a cross build)
// with `args`.
std::vector<std::string> ldconfig(const std::vector<std::string> &args) {
    std::vector<std::string> argv = fixture::ldconfig_argv();
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

// Debian's ld.so.conf.d/MULTIARCH.conf, as libc6 installs it.
void write_multiarch_conf(const std::string &root) {
    const std::string arch = SJAIL_MULTIARCH;
    fixture::write_text(root + "/etc/ld.so.conf.d/" + arch + ".conf",
                        "# Multiarch support\n/usr/local/lib/" + arch + "\n/lib/" + arch +
                            "\n/usr/lib/" + arch + "\n");
}

std::string stat_text(const struct stat &st) {
    return std::to_string(st.st_mode) + " " + std::to_string(st.st_uid) + ":" +
           std::to_string(st.st_gid) + " size=" + std::to_string(st.st_size) +
           " ino=" + std::to_string(st.st_ino) + " mtime=" + std::to_string(st.st_mtim.tv_sec) +
           "." + std::to_string(st.st_mtim.tv_nsec) +
           " ctime=" + std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
}

void walk(const std::string &path, dev_t dev, std::map<std::string, std::string> &out) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        throw std::runtime_error("lstat " + path + ": " + std::strerror(errno));
    }
    std::string text = stat_text(st);
    if (st.st_dev != dev) {
        out[path] = "another file system";
        return;
    }
    if (S_ISLNK(st.st_mode)) {
        text += " -> " + fs::read_symlink(path).string();
    } else if (S_ISREG(st.st_mode)) {
        text += " content=" + fixture::read_bytes(path);
    } else if (S_ISDIR(st.st_mode)) {
        for (const auto &e : fs::directory_iterator(path)) {
            walk(e.path().string(), dev, out);
        }
    }
    out[path] = text;
}

} // namespace

void make_node_root(const std::string &root) {
    fixture::install_host_libc(root + fixture::kMultiarchLib);
    link_to("usr/lib", root + "/lib");
    fixture::make_dirs(root + "/usr/bin");
    fixture::make_dirs(root + "/etc/ld.so.conf.d");
    fixture::write_text(root + "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
    write_multiarch_conf(root);
    refresh_cache(root);
}

void refresh_cache(const std::string &root) {
    std::string out;
    if (fixture::run(
            ldconfig({"-X", "-r", root, "-C", "/etc/ld.so.cache", "-f", "/etc/ld.so.conf"}),
            &out) != 0) {
        throw std::runtime_error("ldconfig over " + root + ": " + out);
    }
}

void install_driver_in_root(const std::string &root, const std::string &version) {
    fixture::install_fake_libs(version, root + fixture::kMultiarchLib);
    copy_to(fixture::fake_driver_dir(version) + "/bin/nvidia-smi", root + "/usr/bin/nvidia-smi");
    refresh_cache(root);
}

void remove_driver_from_root(const std::string &root) {
    for (const auto &dir : {root + fixture::kMultiarchLib, root + "/usr/bin"}) {
        for (const auto &e : fs::directory_iterator(dir)) {
            const std::string name = e.path().filename().string();
            if (name.rfind("libcuda", 0) == 0 || name.rfind("libnvidia-", 0) == 0 ||
                name == "nvidia-smi") {
                fs::remove(e.path());
            }
        }
    }
}

void make_toolkit_root(const std::string &dir, const std::string &version) {
    fixture::install_fake_libs(version, dir + "/lib64");
    copy_to(fixture::fake_driver_dir(version) + "/bin/nvidia-smi", dir + "/bin/nvidia-smi");
}

void ready_jail(const std::string &jail) {
    fixture::install_host_libc(jail + fixture::kMultiarchLib);
    link_to("usr/lib", jail + "/lib");
    link_to(fixture::kMultiarchLib + "/" + fixture::kLoaderName, jail + kLoaderLink);
    fixture::make_dirs(jail + "/etc/ld.so.conf.d");
    fixture::write_text(jail + "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
    write_multiarch_conf(jail);
    fixture::make_dirs(jail + "/var/cache/ldconfig");
    fs::permissions(jail + "/var/cache/ldconfig", fs::perms::owner_all);
    fixture::make_dirs(jail + "/usr/local/nvidia");
    fixture::make_dirs(jail + "/run/nvidia-persistenced");
    fixture::make_dirs(jail + "/usr/share/nvidia");
    fixture::write_text(jail + "/usr/share/nvidia/nvoptix.bin", "");
    for (const std::string probe : {"fake_nvidia_dlopen_probe", "fake_nvidia_cuda_probe"}) {
        copy_to(fixture::probe_path(probe), jail + "/usr/local/bin/" + probe);
    }
    std::string out;
    if (fixture::run(ldconfig({"-r", jail}), &out) != 0) { // the jail's own cache
        throw std::runtime_error("ldconfig over the jail: " + out);
    }
}

std::map<std::string, std::string> snapshot(const std::string &dir) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) {
        throw std::runtime_error("lstat " + dir);
    }
    std::map<std::string, std::string> out;
    walk(dir, st.st_dev, out);
    return out;
}

} // namespace gpu_sandbox
