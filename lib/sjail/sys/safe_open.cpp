// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/safe_open.hpp"

#include "sjail/core/path_rules.hpp"
#include "sjail/sys/cached_stat.hpp"

#include <cerrno>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace sjail {
namespace {

bool root_owned_and_closed(const struct stat &st) {
    return st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

std::uint64_t resolve_flags(Resolve policy) noexcept {
    switch (policy) {
    case Resolve::FollowSymlinks:
        return RESOLVE_NO_MAGICLINKS;
    case Resolve::NoSymlinks:
        return RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    case Resolve::Beneath:
        return RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    case Resolve::BeneathSameMount:
        return RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    case Resolve::InRoot:
        return RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    case Resolve::BeneathCached:
        return RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_CACHED;
    case Resolve::NoSymlinksCached:
        return RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_CACHED;
    }
    return RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS; // the strictest
}

// Opens one component below `dir`, refusing symlinks. `err` receives the errno
// of a failed open (0 otherwise) so callers can tell "missing" from "refused".
// Attributes from a fresh fstat, or from the node's attribute cache
// (cached_stat.hpp) where a step must not ask the jail's server.
int stat_of(int fd, struct stat &st, Attributes attrs) {
    return attrs == Attributes::Fresh ? ::fstat(fd, &st) : fstat_cached(fd, st);
}

Status open_component(int dir, const std::string &name, const std::string &shown, Fd &out,
                      int *err_out = nullptr, Attributes attrs = Attributes::Fresh) {
    Fd opened =
        open_below(dir, name.c_str(), O_PATH | O_NOFOLLOW,
                   attrs == Attributes::CachedOnly ? Resolve::BeneathCached : Resolve::Beneath);
    if (err_out != nullptr) {
        *err_out = opened.valid() ? 0 : errno;
    }
    if (!opened.valid()) {
        const int err = errno;
        if (err == ELOOP) {
            return Status::failure(shown + " is a symlink; the plugin never follows symlinks "
                                           "(remove it, or point the config at the real path)");
        }
        if (err == EAGAIN && attrs == Attributes::CachedOnly) {
            return Status::failure(shown + " is not in this node's lookup cache (finding it "
                                           "would ask its filesystem's server)");
        }
        return Status::from_errno(shown, err);
    }
    out = std::move(opened);
    struct stat st {};
    if (stat_of(out.get(), st, attrs) != 0) {
        return Status::from_errno(shown + ": fstat");
    }
    if (S_ISLNK(st.st_mode)) {
        return Status::failure(shown + " is a symlink; the plugin never follows symlinks "
                                       "(remove it, or point the config at the real path)");
    }
    return {};
}

Status fstat_checked(int fd, const std::string &shown, struct stat &st,
                     Attributes attrs = Attributes::Fresh) {
    if (stat_of(fd, st, attrs) != 0) {
        return Status::from_errno(shown + ": fstat");
    }
    return {};
}

Status check_dir_root_owned(int fd, const std::string &shown,
                            Attributes attrs = Attributes::Fresh) {
    struct stat st {};
    if (auto s = fstat_checked(fd, shown, st, attrs); !s.ok()) {
        return s;
    }
    if (!S_ISDIR(st.st_mode)) {
        return Status::failure(shown + " is not a directory");
    }
    return check_root_owned(shown, st.st_uid, st.st_mode);
}

// One component of a mount target's way, opened already: a directory
// users cannot change on the way, and at its end the source's type.
Status check_target_component(int fd, const std::string &in_jail, const std::string &target,
                              TargetType type, bool last) {
    struct stat st {};
    if (auto s = fstat_checked(fd, in_jail, st); !s.ok()) {
        return s;
    }
    if (!last) {
        if (!S_ISDIR(st.st_mode)) {
            return Status::failure(in_jail + " is not a directory");
        }
        if (auto s = check_root_owned(in_jail, st.st_uid, st.st_mode); !s.ok()) {
            return Status::failure("refusing to mount " + target +
                                   " through a path users control: " + s.message());
        }
    } else if (type == TargetType::Directory && !S_ISDIR(st.st_mode)) {
        return Status::failure("mount point " + target +
                               " inside the jail is not a directory, but its source is");
    } else if (type == TargetType::File && !S_ISREG(st.st_mode)) {
        return Status::failure("mount point " + target +
                               " inside the jail is not a regular file, but its source is");
    }
    return {};
}

} // namespace

Fd open_below(int dir, const char *path, std::uint64_t flags, Resolve policy) noexcept {
    open_how how{};
    how.flags = flags | O_CLOEXEC;
    how.resolve = resolve_flags(policy);
    return Fd(static_cast<int>(::syscall(SYS_openat2, dir, path, &how, sizeof(how))));
}

Status open_root_owned_dir(const std::string &path, Fd &out, Attributes attrs, bool *not_cached) {
    if (auto s = check_absolute_path("path", path); !s.ok()) {
        return s;
    }
    Fd current(::open("/", O_PATH | O_CLOEXEC | O_DIRECTORY));
    if (!current.valid()) {
        return Status::from_errno("open /");
    }
    if (auto s = check_dir_root_owned(current.get(), "/", attrs); !s.ok()) {
        return s;
    }
    std::string shown;
    for (const auto &component : split_components(path)) {
        shown += "/" + component;
        Fd next;
        int err = 0;
        if (auto s = open_component(current.get(), component, shown, next, &err, attrs); !s.ok()) {
            if (not_cached != nullptr) {
                *not_cached = err == EAGAIN && attrs == Attributes::CachedOnly;
            }
            return s;
        }
        if (auto s = check_dir_root_owned(next.get(), shown, attrs); !s.ok()) {
            return s;
        }
        current = std::move(next);
    }
    out = std::move(current);
    return {};
}

Status open_mount_target(int jail_root, const std::string &target, TargetType type, Fd &out) {
    const auto components = split_components(target);
    if (components.empty()) {
        return Status::failure("mount target / is the jail root itself");
    }
    Fd current(::fcntl(jail_root, F_DUPFD_CLOEXEC, 0));
    if (!current.valid()) {
        return Status::from_errno("dup jail fd");
    }
    std::string shown;
    for (std::size_t i = 0; i < components.size(); ++i) {
        shown += "/" + components[i];
        const std::string in_jail = "jail path " + shown;
        Fd next;
        int err = 0;
        if (auto s = open_component(current.get(), components[i], in_jail, next, &err); !s.ok()) {
            if (err == ENOENT) {
                return Status::failure("mount point " + target +
                                       " is missing inside the jail; create it in the jail "
                                       "image as a root-owned " +
                                       (type == TargetType::Directory ? "directory" : "file"));
            }
            return s;
        }
        const bool last = i + 1 == components.size();
        if (auto s = check_target_component(next.get(), in_jail, target, type, last); !s.ok()) {
            return s;
        }
        current = std::move(next);
    }
    out = std::move(current);
    return {};
}

namespace {

// mkdir NAME in DIR with exactly `mode` (the umask undone); an existing one is fine.
Status make_dir(int dir, const std::string &name, const std::string &shown, mode_t mode) {
    if (::mkdirat(dir, name.c_str(), mode) == 0) {
        if (::fchmodat(dir, name.c_str(), mode, 0) != 0) {
            return Status::from_errno("chmod " + shown);
        }
    } else if (errno != EEXIST) {
        return Status::from_errno("mkdir " + shown);
    }
    return {};
}

// A directory of ensure_root_dir's way, opened already: root's, and the
// last one no more writable by group or others than `mode` allows.
Status check_walked_dir(int fd, const std::string &shown, unsigned mode, bool last) {
    struct stat st {};
    if (auto s = fstat_checked(fd, shown, st); !s.ok()) {
        return s;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != 0) {
        return Status::failure(shown +
                               " must be a root-owned directory; remove it, or run: "
                               "chown root:root " +
                               shown);
    }
    const mode_t extra_write = st.st_mode & ~static_cast<mode_t>(mode) & (S_IWGRP | S_IWOTH);
    if (last && extra_write != 0) {
        return Status::failure(shown + " is writable by group or others; run: chmod go-w " + shown);
    }
    return {};
}

// The walk of ensure_root_dir; with `create` false it only looks: a missing
// component is fine (it would be created below a checked parent).
Status walk_root_dir(const std::string &path, unsigned mode, bool create) {
    if (auto s = check_absolute_path("path", path); !s.ok()) {
        return s;
    }
    Fd current(::open("/", O_PATH | O_CLOEXEC | O_DIRECTORY));
    std::string parent = "/";
    std::string shown;
    const auto components = split_components(path);
    for (std::size_t i = 0; i < components.size(); ++i) {
        shown += "/" + components[i];
        // A root-owned parent closed to others means no user can plant this name.
        if (auto s = check_dir_root_owned(current.get(), parent); !s.ok()) {
            return Status::failure("cannot create " + path + " safely: " + s.message());
        }
        const auto m = static_cast<mode_t>(i + 1 == components.size() ? mode : 0755U);
        if (create) {
            if (auto s = make_dir(current.get(), components[i], shown, m); !s.ok()) {
                return s;
            }
        }
        Fd next;
        int err = 0;
        if (auto s = open_component(current.get(), components[i], shown, next, &err); !s.ok()) {
            if (!create && err == ENOENT) {
                return {};
            }
            return s;
        }
        const bool last = i + 1 == components.size();
        if (auto s = check_walked_dir(next.get(), shown, mode, last); !s.ok()) {
            return s;
        }
        current = std::move(next);
        parent = shown;
    }
    return {};
}

} // namespace

Status ensure_root_dir(const std::string &path, unsigned mode) {
    return walk_root_dir(path, mode, true);
}

Status check_root_dir(const std::string &path, unsigned mode) {
    return walk_root_dir(path, mode, false);
}

namespace {

constexpr int kMaxSymlinks = 40; // as the kernel's own limit

struct Walk {
    Fd dir;              // the directory the next component is looked up in
    bool trusted = true; // every directory so far is root-owned and closed to others
    std::string shown;   // the path resolved so far, for messages
    int links = 0;
};

Status restart_at_root(Walk &walk) {
    walk.dir.reset(::open("/", O_PATH | O_CLOEXEC | O_DIRECTORY));
    struct stat st {};
    if (!walk.dir.valid() || ::fstat(walk.dir.get(), &st) != 0) {
        return Status::from_errno("open /");
    }
    walk.trusted = walk.trusted && root_owned_and_closed(st);
    walk.shown.clear();
    return {};
}

Status follow_link(Walk &walk, int link_fd, const std::string &link_path,
                   std::vector<std::string> &pending) {
    if (!walk.trusted) {
        return Status::failure(link_path + " is a symlink below a directory users can write; the "
                                           "plugin never follows such links (bind the real path)");
    }
    if (++walk.links > kMaxSymlinks) {
        return Status::failure(link_path + ": too many levels of symbolic links");
    }
    char target[4096];
    const ssize_t n = ::readlinkat(link_fd, "", target, sizeof(target) - 1);
    if (n <= 0) {
        return Status::from_errno("readlink " + link_path);
    }
    const std::string_view text(target, static_cast<std::size_t>(n));
    push_components(pending, text);
    if (text.front() == '/') {
        return restart_at_root(walk);
    }
    return {};
}

// Opens `name` in the walk's directory as itself (a symlink too), with its
// attributes; `next` is the path it stands at, for messages.
Status look_up(const Walk &walk, const std::string &name, const std::string &next, Fd &fd,
               struct stat &st) {
    fd.reset(::openat(walk.dir.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
        if (errno == ENOENT) {
            return Status::failure(next + " does not exist on this node");
        }
        return Status::from_errno(next);
    }
    if (::fstat(fd.get(), &st) != 0) {
        return Status::from_errno("fstat " + next);
    }
    return {};
}

} // namespace

Status open_node_path(const std::string &path, Fd &out) {
    if (auto s = check_absolute_path("path", path); !s.ok()) {
        return s;
    }
    Walk walk;
    if (auto s = restart_at_root(walk); !s.ok()) {
        return s;
    }
    std::vector<std::string> pending;
    push_components(pending, path);
    while (!pending.empty()) {
        const std::string name = pending.back();
        pending.pop_back();
        if (name == ".") {
            continue;
        }
        const std::string next = walk.shown + "/" + name;
        Fd fd;
        struct stat st {};
        if (auto s = look_up(walk, name, next, fd, st); !s.ok()) {
            return s;
        }
        if (S_ISLNK(st.st_mode)) {
            if (auto s = follow_link(walk, fd.get(), next, pending); !s.ok()) {
                return s;
            }
            continue;
        }
        if (name == "..") {
            // Only reachable through a trusted link's target; the walk stays correct.
            const auto slash = walk.shown.rfind('/');
            walk.shown = slash == std::string::npos ? "" : walk.shown.substr(0, slash);
        } else {
            walk.shown = next;
        }
        if (S_ISDIR(st.st_mode)) {
            walk.trusted = walk.trusted && root_owned_and_closed(st);
        } else if (!pending.empty()) {
            return Status::failure(walk.shown + " is not a directory");
        }
        walk.dir = std::move(fd);
    }
    out = std::move(walk.dir);
    return {};
}

} // namespace sjail
