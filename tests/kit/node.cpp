// SPDX-License-Identifier: Apache-2.0
#include "kit/node.hpp"

#include "kit/files.hpp"
#include "sjail/core/path_rules.hpp"

#include <filesystem>
#include <fstream>
#include <sched.h>
#include <sstream>
#include <sys/mount.h>

namespace kit {

std::string private_node_namespace(const std::string &source, HostMounts host) {
    if (::unshare(CLONE_NEWNS) != 0) {
        return errno_text("unshare(CLONE_NEWNS) (needs root)");
    }
    const bool slave = host == HostMounts::Slave;
    if (::mount(nullptr, "/", nullptr, MS_REC | (slave ? MS_SLAVE : MS_PRIVATE), nullptr) != 0) {
        return errno_text(slave ? "make-rslave /" : "make-rprivate /");
    }
    if (::mount(source.c_str(), "/mnt", "tmpfs", 0, "mode=0755") != 0) {
        return errno_text("tmpfs on /mnt");
    }
    return "";
}

namespace {

// Copies one entry of /etc to `to`; an entry that is gone meanwhile (a
// file the host renames into place, as useradd does) is left out.
std::string copy_etc_entry(const std::filesystem::directory_entry &entry,
                           const std::filesystem::path &to) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto status = entry.symlink_status(ec);
    if (!ec) {
        if (fs::is_symlink(status)) {
            fs::copy_symlink(entry.path(), to, ec);
        } else if (fs::is_directory(status)) {
            fs::create_directory(to, entry.path(), ec);
        } else if (fs::is_regular_file(status)) {
            fs::copy_file(entry.path(), to, ec);
        }
    }
    if (ec && ec != std::errc::no_such_file_or_directory) {
        return "copying " + entry.path().string() + ": " + ec.message();
    }
    return "";
}

} // namespace

std::string own_etc_copy(const std::string &copy) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::create_directory(copy, "/etc", ec)) {
        return "making " + copy + ": " + (ec ? ec.message() : "it exists already");
    }
    for (fs::recursive_directory_iterator it("/etc", ec), end; !ec && it != end; it.increment(ec)) {
        if (auto e = copy_etc_entry(*it, copy / it->path().lexically_relative("/etc"));
            !e.empty()) {
            return e;
        }
    }
    if (ec) {
        return "copying /etc to " + copy + ": " + ec.message();
    }
    if (::mount(copy.c_str(), "/etc", nullptr, MS_BIND, nullptr) != 0) {
        return errno_text("bind " + copy + " on /etc");
    }
    return "";
}

std::vector<std::string> mount_points() {
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
        found.push_back(mount_point);
    }
    return found;
}

std::vector<std::string> mounts_below(const std::string &prefix) {
    std::vector<std::string> found;
    for (auto &mount_point : mount_points()) {
        if (sjail::is_same_or_below(mount_point, prefix)) {
            found.push_back(std::move(mount_point));
        }
    }
    return found;
}

} // namespace kit
