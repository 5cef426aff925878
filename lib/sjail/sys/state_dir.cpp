// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/state_dir.hpp"

#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace sjail {

Status prepare_state_dir(const std::string &state) {
    if (auto s = ensure_root_dir(state, 0700); !s.ok()) {
        return Status::failure("state directory: " + s.message());
    }
    return {};
}

Status lock_state(const std::string &state, Fd &lock, int how) {
    const std::string path = state + "/lock";
    lock = open_regular(path, O_CREAT | O_RDWR);
    if (!lock.valid()) {
        return Status::from_errno("open " + path +
                                  " (it must be a regular file; remove anything "
                                  "else there)");
    }
    while (::flock(lock.get(), how) != 0) {
        if (errno != EINTR) {
            return Status::from_errno("flock " + path);
        }
    }
    return {};
}

void open_kept_namespace(const std::string &state, Fd &out) {
    open_namespace_file(state + "/ns", out);
}

void open_namespace_file(const std::string &path, Fd &out) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    struct statfs fs {};
    if (fd.valid() && ::fstatfs(fd.get(), &fs) == 0 &&
        static_cast<unsigned long>(fs.f_type) == NSFS_MAGIC) {
        out = std::move(fd);
    }
}

Status reset_mount_point_file(const std::string &path) {
    (void)::umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
    if (!open_regular(path, O_CREAT | O_RDONLY, 0400).valid()) {
        return Status::from_errno("create " + path + " (it must be a regular file)");
    }
    return {};
}

Status make_private_mount(const std::string &state) {
    struct statx stx {};
    if (::statx(AT_FDCWD, state.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx) != 0) {
        return Status::from_errno("statx " + state);
    }
    if ((stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) == 0) {
        if (::mount(state.c_str(), state.c_str(), nullptr, MS_BIND, nullptr) != 0) {
            return Status::from_errno("bind " + state + " onto itself");
        }
        if (!open_regular(state + "/self-bind", O_CREAT | O_RDONLY).valid()) {
            return Status::from_errno("create " + state + "/self-bind");
        }
    }
    if (::mount(nullptr, state.c_str(), nullptr, MS_PRIVATE, nullptr) != 0) {
        return Status::from_errno("make " + state + " a private mount");
    }
    return {};
}

Status reset_namespace_file(const std::string &state) {
    return reset_mount_point_file(state + "/ns");
}

} // namespace sjail
