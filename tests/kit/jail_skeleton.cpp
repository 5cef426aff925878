// SPDX-License-Identifier: Apache-2.0
#include "kit/jail_skeleton.hpp"

#include "kit/files.hpp"

#include <sys/stat.h>

namespace kit {
namespace {

bool is_file(const std::string &path) {
    struct stat st {};
    return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string make_mount_point(const std::string &jail, const sjail::MountOp &op) {
    const std::string path = jail + op.target;
    if (!is_file(op.source)) {
        return mkdir_p(path, op.target == "/tmp" ? 01777 : 0755);
    }
    if (auto e = mkdir_p(path.substr(0, path.rfind('/')), 0755); !e.empty()) {
        return e;
    }
    return write_file(path, "");
}

} // namespace

std::string make_jail_skeleton(const std::string &jail, const std::vector<sjail::MountOp> &plan,
                               const std::string &release) {
    for (const auto &op : plan) {
        if (auto e = make_mount_point(jail, op); !e.empty()) {
            return e;
        }
    }
    if (auto e = mkdir_p(jail + "/etc", 0755); !e.empty()) {
        return e;
    }
    return write_file(jail + "/etc/slurm-jail-release", release);
}

} // namespace kit
