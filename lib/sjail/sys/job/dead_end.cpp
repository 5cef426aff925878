// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/job/dead_end.hpp"

#include "sjail/sys/fs_mount.hpp"
#include "sjail/sys/safe_open.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <initializer_list>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sjail {
namespace {

constexpr unsigned kNoExec = MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

// Closes an fd on scope exit (no allocation).
struct Closer {
    int fd;
    explicit Closer(int f) noexcept : fd(f) {}
    Closer(const Closer &) = delete;
    Closer &operator=(const Closer &) = delete;
    ~Closer() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

int make_empty_tmpfs() noexcept {
    constexpr FsParam kParams[] = {{"mode", "0755"}, {"size", "64k"}};
    return make_mount("tmpfs", kParams, kNoExec).release();
}

// An O_PATH fd of an absolute path in the thread's current view. Symlinks
// are refused, except for name-resolution files, which are often links on
// nodes (/etc/resolv.conf -> /run/...) and are only ever read.
int open_source(const char *path, bool links_allowed) noexcept {
    return open_below(AT_FDCWD, path, O_PATH,
                      links_allowed ? Resolve::FollowSymlinks : Resolve::NoSymlinks)
        .release();
}

// Creates `path` (absolute) below `root`: directories, and the last
// component as a directory or an empty file. Returns an O_PATH fd of it.
int make_mount_point(int root, const char *path, bool directory) noexcept {
    char buf[PATH_MAX];
    const std::size_t len = ::strnlen(path, sizeof(buf));
    if (len == 0 || len >= sizeof(buf) || path[0] != '/') {
        return -1;
    }
    std::memcpy(buf, path, len + 1);
    int dir = ::fcntl(root, F_DUPFD_CLOEXEC, 0);
    char *name = buf + 1;
    while (dir >= 0 && *name != '\0') {
        char *slash = std::strchr(name, '/');
        const bool last = slash == nullptr;
        if (!last) {
            *slash = '\0';
        }
        if (last && !directory) {
            const int file = ::openat(dir, name, O_CREAT | O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
            ::close(dir);
            return file;
        }
        (void)::mkdirat(dir, name, 0755);
        const int next = ::openat(dir, name, O_PATH | O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY);
        ::close(dir);
        dir = next;
        name = last ? name + std::strlen(name) : slash + 1;
    }
    return dir;
}

enum class Kind { Directory, CharDevice, RootOwnedClosedDirectory, ReadOnlyFile };

bool is_kind(int fd, Kind kind) noexcept {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return false;
    }
    switch (kind) {
    case Kind::CharDevice:
        return S_ISCHR(st.st_mode);
    case Kind::RootOwnedClosedDirectory:
        return S_ISDIR(st.st_mode) && st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
    case Kind::ReadOnlyFile:
        return S_ISREG(st.st_mode);
    case Kind::Directory:
        break;
    }
    return S_ISDIR(st.st_mode);
}

// Binds `path` of the current view at the same path in the dead end. Best effort.
void bring(int dead_end, const char *path, Kind kind, unsigned attrs, bool recursive) noexcept {
    const int source = open_source(path, kind == Kind::ReadOnlyFile);
    const Closer close_source(source);
    if (source < 0 || !is_kind(source, kind)) {
        return;
    }
    const unsigned rec = recursive ? AT_RECURSIVE : 0U;
    const int tree =
        ::open_tree(source, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | rec);
    const Closer close_tree(tree);
    const bool directory = kind == Kind::Directory || kind == Kind::RootOwnedClosedDirectory;
    const int target = make_mount_point(dead_end, path, directory);
    const Closer close_target(target);
    mount_attr attr{};
    attr.attr_set = attrs;
    if (tree >= 0 && target >= 0 &&
        ::mount_setattr(tree, "", AT_EMPTY_PATH | rec, &attr, sizeof(attr)) == 0) {
        (void)::move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
    }
}

void furnish(int dead_end, const char *munge_dir, const char *spool_dir) noexcept {
    if (munge_dir != nullptr) {
        bring(dead_end, munge_dir, Kind::Directory, kNoExec, false);
    }
    // slurmstepd removes a batch step's script and its directory from here.
    if (spool_dir != nullptr) {
        bring(dead_end, spool_dir, Kind::RootOwnedClosedDirectory, kNoExec, false);
    }
    // A device, so not nodev; still noexec and nosuid.
    bring(dead_end, "/dev/null", Kind::CharDevice, MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSUID, false);
    bring(dead_end, "/sys/fs/cgroup", Kind::Directory, kNoExec, true);
    bring(dead_end, "/home", Kind::RootOwnedClosedDirectory, kNoExec, false);
    // slurmstepd resolves the controller's name to report the step's end.
    for (const char *file : {"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf"}) {
        bring(dead_end, file, Kind::ReadOnlyFile, kNoExec | MOUNT_ATTR_RDONLY, false);
    }
}

bool chroot_into(int dir) noexcept {
    return ::fchdir(dir) == 0 && ::chroot(".") == 0 && ::chdir("/") == 0;
}

} // namespace

bool enter_dead_end(const char *munge_dir, const char *spool_dir) noexcept {
    const int tmpfs = make_empty_tmpfs();
    if (tmpfs < 0) {
        return false;
    }
    const Closer close_tmpfs(tmpfs);
    // A namespace of this thread's own (CLONE_NEWNS implies CLONE_FS), so the
    // dead end can be attached and furnished without touching anyone else's
    // view. It is attached on /proc, which exists in every view.
    if (::unshare(CLONE_NEWNS) == 0 &&
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
        ::move_mount(tmpfs, "", AT_FDCWD, "/proc", MOVE_MOUNT_F_EMPTY_PATH) == 0) {
        furnish(tmpfs, munge_dir, spool_dir); // none of its sources lies under /proc
        mount_attr ro{};
        ro.attr_set = MOUNT_ATTR_RDONLY;
        (void)::mount_setattr(tmpfs, "", AT_EMPTY_PATH, &ro, sizeof(ro));
        if (chroot_into(tmpfs)) {
            return true;
        }
    }
    // Without a namespace of its own the thread can still be rooted in the
    // detached, empty tmpfs.
    return ::unshare(CLONE_FS) == 0 && chroot_into(tmpfs);
}

} // namespace sjail
