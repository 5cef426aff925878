// SPDX-License-Identifier: Apache-2.0
#include "kit/node.hpp"

#include "kit/files.hpp"
#include "sjail/core/path_rules.hpp"

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
