#include "safe_open.hpp"

#include "path_rules.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sjail {
namespace {

std::string errno_text(int err) {
    return std::strerror(err);
}

int openat2_beneath(int dirfd, const std::string &name, std::uint64_t flags) {
    open_how how{};
    how.flags = flags | O_PATH | O_CLOEXEC | O_NOFOLLOW;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    return static_cast<int>(::syscall(SYS_openat2, dirfd, name.c_str(), &how, sizeof(how)));
}

// Opens one component below `dir`, refusing symlinks. `err` receives the errno
// of a failed open (0 otherwise) so callers can tell "missing" from "refused".
Status open_component(int dir, const std::string &name, const std::string &shown, Fd &out,
                      int *err_out = nullptr) {
    const int fd = openat2_beneath(dir, name, 0);
    if (err_out != nullptr) {
        *err_out = fd < 0 ? errno : 0;
    }
    if (fd < 0) {
        const int err = errno;
        if (err == ELOOP) {
            return Status::failure(shown + " is a symlink; the plugin never follows symlinks "
                                           "(remove it, or point the config at the real path)");
        }
        return Status::failure(shown + ": " + errno_text(err));
    }
    out.reset(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return Status::failure(shown + ": fstat: " + errno_text(errno));
    }
    if (S_ISLNK(st.st_mode)) {
        return Status::failure(shown + " is a symlink; the plugin never follows symlinks "
                                       "(remove it, or point the config at the real path)");
    }
    return {};
}

Status fstat_checked(int fd, const std::string &shown, struct stat &st) {
    if (::fstat(fd, &st) != 0) {
        return Status::failure(shown + ": fstat: " + errno_text(errno));
    }
    return {};
}

Status check_dir_root_owned(int fd, const std::string &shown) {
    struct stat st {};
    if (auto s = fstat_checked(fd, shown, st); !s.ok()) {
        return s;
    }
    if (!S_ISDIR(st.st_mode)) {
        return Status::failure(shown + " is not a directory");
    }
    return check_root_owned(shown, st.st_uid, st.st_mode);
}

} // namespace

Status open_root_owned_dir(const std::string &path, Fd &out) {
    if (auto s = check_absolute_path("path", path); !s.ok()) {
        return s;
    }
    Fd current(::open("/", O_PATH | O_CLOEXEC | O_DIRECTORY));
    if (!current.valid()) {
        return Status::failure("open /: " + errno_text(errno));
    }
    if (auto s = check_dir_root_owned(current.get(), "/"); !s.ok()) {
        return s;
    }
    std::string shown;
    for (const auto &component : split_components(path)) {
        shown += "/" + component;
        Fd next;
        if (auto s = open_component(current.get(), component, shown, next); !s.ok()) {
            return s;
        }
        if (auto s = check_dir_root_owned(next.get(), shown); !s.ok()) {
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
        return Status::failure("dup jail fd: " + errno_text(errno));
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
        struct stat st {};
        if (auto s = fstat_checked(next.get(), in_jail, st); !s.ok()) {
            return s;
        }
        const bool last = i + 1 == components.size();
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
        current = std::move(next);
    }
    out = std::move(current);
    return {};
}

Status ensure_root_dir(const std::string &path, unsigned mode) {
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
        if (::mkdirat(current.get(), components[i].c_str(), m) == 0) {
            if (::fchmodat(current.get(), components[i].c_str(), m, 0) != 0) { // undo the umask
                return Status::failure("chmod " + shown + ": " + errno_text(errno));
            }
        } else if (errno != EEXIST) {
            return Status::failure("mkdir " + shown + ": " + errno_text(errno));
        }
        Fd next;
        if (auto s = open_component(current.get(), components[i], shown, next); !s.ok()) {
            return s;
        }
        struct stat st {};
        if (auto s = fstat_checked(next.get(), shown, st); !s.ok()) {
            return s;
        }
        if (!S_ISDIR(st.st_mode) || st.st_uid != 0) {
            return Status::failure(shown + " must be a root-owned directory");
        }
        current = std::move(next);
        parent = shown;
    }
    return {};
}

} // namespace sjail
