// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/private_mounts.hpp"

#include "sjail/sys/fs_mount.hpp"
#include "sjail/sys/safe_open.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
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

Status share_tmp_as_var_tmp() {
    struct stat st {};
    if (::lstat("/var/tmp", &st) != 0 && errno == ENOENT) {
        return {};
    }
    Fd tmp;
    if (auto s = open_mount_point("/tmp", tmp); !s.ok()) {
        return s;
    }
    const Fd tree(::open_tree(tmp.get(), "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
    if (!tree.valid()) {
        return Status::from_errno("binding /tmp at /var/tmp");
    }
    if (auto s = attach_mount(tree.get(), "/var/tmp"); !s.ok()) {
        return Status::failure(s.message() +
                               "; make /var/tmp a directory in the jail, or set var_tmp=jail");
    }
    return {};
}

} // namespace sjail
