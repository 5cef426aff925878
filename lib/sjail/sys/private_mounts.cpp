// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/private_mounts.hpp"

#include "sjail/sys/fs_mount.hpp"
#include "sjail/sys/safe_open.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <vector>

namespace sjail {

Status open_mount_point(const char *path, Fd &out) {
    out = open_below(AT_FDCWD, path, O_PATH | O_DIRECTORY, Resolve::NoSymlinks);
    return out.valid() ? Status() : Status::from_errno(std::string("mount point ") + path);
}

Status attach_mount(int mnt, const char *target) {
    Fd where;
    if (auto s = open_mount_point(target, where); !s.ok()) {
        return s;
    }
    if (::move_mount(mnt, "", where.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) !=
        0) {
        return Status::from_errno(std::string("mounting the private ") + target);
    }
    return {};
}

Status mount_private_tmpfs(const std::string &size, const char *target, const char *inodes) {
    std::vector<FsParam> params = {{"mode", "1777"}};
    if (!size.empty()) {
        params.push_back({"size", size.c_str()});
    }
    if (inodes != nullptr) {
        params.push_back({"nr_inodes", inodes});
    }
    Fd mnt;
    if (auto s = make_mount("tmpfs", params, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, mnt); !s.ok()) {
        return Status::failure(std::string("creating the private ") + target + ": " + s.message());
    }
    return attach_mount(mnt.get(), target);
}

} // namespace sjail
