// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/trusted_path.hpp"

#include "sjail/core/path_rules.hpp"
#include "sjail/sys/safe_open.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <vector>

namespace sjail {
namespace {

constexpr int kMaxSymlinks = 40;
constexpr int kMaxSonameHops = 8;

Status read_link(int link_fd, const std::string &shown, std::string &target) {
    char buf[4096];
    const ssize_t n = ::readlinkat(link_fd, "", buf, sizeof(buf));
    if (n < 0) {
        return Status::from_errno("readlink " + shown);
    }
    if (n == 0 || static_cast<std::size_t>(n) == sizeof(buf)) {
        return Status::failure(shown + " is a symlink with an empty or overlong target");
    }
    target.assign(buf, static_cast<std::size_t>(n));
    return {};
}

std::string logical(const std::vector<std::string> &names) {
    std::string p;
    for (const auto &n : names) {
        p += "/" + n;
    }
    return p.empty() ? "/" : p;
}

Status check_file(const std::string &shown, const struct stat &st) {
    if (!S_ISREG(st.st_mode)) {
        return Status::failure(shown + " is not a regular file");
    }
    return check_root_owned(shown, st.st_uid, st.st_mode);
}

// Reopens the O_PATH file `name` in `dir` for reading, insisting on the same inode.
Status reopen_for_reading(int dir, const std::string &name, const std::string &shown,
                          TrustedOpen &out) {
    // One component below `dir`; a trailing symlink is refused (ELOOP).
    Fd fd = open_below(dir, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW, Resolve::Beneath);
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
        return Status::from_errno("open " + shown);
    }
    if (st.st_dev != out.st.st_dev || st.st_ino != out.st.st_ino) {
        return Status::failure(shown + " changed while it was being opened; try again");
    }
    out.fd = std::move(fd);
    return {};
}

// The facts the trust rules judge; the mount is looked at only when the policy asks.
PathFacts facts_of(int fd, const struct stat &st, const TrustPolicy &policy) {
    struct statvfs vfs {};
    const bool read_only =
        policy.read_only_mounts && ::fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY) != 0;
    return {st.st_uid, st.st_mode, read_only};
}

// Applies `policy` to one component; a refusal also says which one and why in `out`.
Status check_component(int fd, const std::string &shown, const struct stat &st,
                       const TrustPolicy &policy, PathRole role, TrustedOpen &out) {
    const auto facts = facts_of(fd, st, policy);
    auto status = check_trusted(shown, facts, policy, role);
    if (!status.ok()) {
        out.shown = shown;
        out.refused_because = untrusted_because(facts, policy, role);
    }
    return status;
}

PathRole final_role(TrustedKind want) {
    switch (want) {
    case TrustedKind::File:
        return PathRole::file_to_use;
    case TrustedKind::PassedDirectory:
        return PathRole::directory_on_the_way;
    case TrustedKind::Directory:
        break;
    }
    return PathRole::directory_to_write;
}

// One walk of open_trusted: the directories opened so far (the root first),
// the logical path for messages, and the components still to look up.
struct Walk {
    std::vector<Fd> dirs;
    std::vector<std::string> names; // the logical path so far, for messages
    std::vector<std::string> todo;
    int links = 0;
    std::string prefix; // shown_root
    TrustedKind want;
    bool for_reading;
    const TrustPolicy &policy;
    TrustedOpen &out;
    bool ended = false; // the last component was handed out
};

// "." stays, ".." goes up one directory but never above the root; true when
// `comp` was one of them.
bool took_dots(Walk &walk, const std::string &comp) {
    if (comp == ".") {
        return true;
    }
    if (comp != "..") {
        return false;
    }
    if (walk.dirs.size() > 1) {
        walk.dirs.pop_back();
        walk.names.pop_back();
    }
    return true;
}

// A symlink on the way: followed when root (or the caller the policy trusts)
// made it; its target's components are looked up next, from the root when
// the target is absolute.
Status follow_symlink(Walk &walk, int link_fd, const struct stat &st, const std::string &shown) {
    // Its directory was checked on the way in, so only root made it,
    // unless it is owned by someone else (made before a chown).
    if (st.st_uid != 0 && st.st_uid != walk.policy.caller) {
        walk.out.shown = shown;
        walk.out.refused_because = "is owned by uid " + std::to_string(st.st_uid);
        return Status::failure(shown + " is a symlink owned by uid " + std::to_string(st.st_uid) +
                               ", not " + trusted_owners(walk.policy.caller) +
                               "; the plugin never follows a user's symlink");
    }
    if (++walk.links > kMaxSymlinks) {
        walk.out.error = ELOOP;
        return Status::failure(shown + ": too many levels of symbolic links");
    }
    std::string target;
    if (auto s = read_link(link_fd, shown, target); !s.ok()) {
        return s;
    }
    walk.names.pop_back();
    if (target.front() == '/') {
        walk.dirs.resize(1);
        walk.names.clear();
    }
    push_components(walk.todo, target);
    return {};
}

// The last component, checked already: handed out as O_PATH, or reopened
// for reading.
Status hand_out(Walk &walk, Fd last, const struct stat &st, const std::string &comp,
                const std::string &shown) {
    walk.ended = true;
    walk.out.fd = std::move(last);
    walk.out.st = st;
    walk.out.shown = shown;
    if (walk.for_reading && walk.want == TrustedKind::File) {
        return reopen_for_reading(walk.dirs.back().get(), comp, shown, walk.out);
    }
    return {};
}

// One named component: opened as itself (a trailing symlink too, to be
// read), followed when it is a symlink, else checked, and then kept as the
// next directory or, when it is the last, handed out.
Status step_into(Walk &walk, const std::string &comp) {
    walk.names.push_back(comp);
    const std::string shown = walk.prefix + logical(walk.names);
    Fd next =
        open_below(walk.dirs.back().get(), comp.c_str(), O_PATH | O_NOFOLLOW, Resolve::Beneath);
    if (!next.valid()) {
        walk.out.missing = errno == ENOENT;
        walk.out.error = errno;
        return Status::from_errno(shown);
    }
    struct stat st {};
    if (::fstat(next.get(), &st) != 0) {
        return Status::from_errno("fstat " + shown);
    }
    if (S_ISLNK(st.st_mode)) {
        return follow_symlink(walk, next.get(), st, shown);
    }
    const bool last = walk.todo.empty();
    if (!last && !S_ISDIR(st.st_mode)) {
        walk.out.error = ENOTDIR;
        return Status::failure(shown + " is not a directory");
    }
    const auto role = last ? final_role(walk.want) : PathRole::directory_on_the_way;
    if (auto s = check_component(next.get(), shown, st, walk.policy, role, walk.out); !s.ok()) {
        return s;
    }
    if (!last) {
        walk.dirs.push_back(std::move(next));
        return {};
    }
    return hand_out(walk, std::move(next), st, comp, shown);
}

// The path named the root itself (or resolved back to it).
Status open_root_itself(Walk &walk) {
    struct stat st {};
    const std::string shown = walk.prefix.empty() ? "/" : walk.prefix;
    if (::fstat(walk.dirs.front().get(), &st) != 0) {
        return Status::from_errno("fstat " + shown);
    }
    if (walk.want == TrustedKind::File) {
        return Status::failure(shown + " is a directory, not a file");
    }
    if (auto s = check_component(walk.dirs.front().get(), shown, st, walk.policy,
                                 final_role(walk.want), walk.out);
        !s.ok()) {
        return s;
    }
    walk.out.fd = std::move(walk.dirs.front());
    walk.out.st = st;
    walk.out.shown = shown;
    return {};
}

} // namespace

Status open_trusted(int root, std::string_view shown_root, std::string_view path, TrustedKind want,
                    TrustedOpen &out, bool for_reading, const TrustPolicy &policy) {
    out = TrustedOpen{};
    Walk walk{{}, {}, {}, 0, std::string(shown_root), want, for_reading, policy, out};
    walk.dirs.emplace_back(::fcntl(root, F_DUPFD_CLOEXEC, 0));
    if (!walk.dirs.back().valid()) {
        return Status::from_errno("dup");
    }
    push_components(walk.todo, path);
    while (!walk.todo.empty()) {
        const std::string comp = walk.todo.back();
        walk.todo.pop_back();
        if (took_dots(walk, comp)) {
            continue;
        }
        if (auto s = step_into(walk, comp); !s.ok() || walk.ended) {
            return s;
        }
    }
    return open_root_itself(walk);
}

Status open_trusted_on_node(std::string_view path, TrustedKind want, TrustedOpen &out,
                            bool for_reading, const TrustPolicy &policy) {
    const Fd slash(::open("/", O_PATH | O_CLOEXEC | O_DIRECTORY));
    if (!slash.valid()) {
        return Status::from_errno("open /");
    }
    struct stat st {};
    if (::fstat(slash.get(), &st) != 0) {
        return Status::from_errno("fstat /");
    }
    if (auto s = check_component(slash.get(), "/", st, policy, PathRole::directory_on_the_way, out);
        !s.ok()) {
        return s;
    }
    return open_trusted(slash.get(), "", path, want, out, for_reading, policy);
}

Status open_in_dir(int dir, const std::string &dir_shown, const std::string &name,
                   std::string &real, TrustedOpen &out) {
    out = TrustedOpen{};
    std::string current = name;
    for (int hop = 0; hop <= kMaxSonameHops; ++hop) {
        const std::string shown = dir_shown + "/" + current;
        Fd fd = open_below(dir, current.c_str(), O_PATH | O_NOFOLLOW, Resolve::Beneath);
        if (!fd.valid()) {
            out.missing = errno == ENOENT;
            return Status::from_errno(shown);
        }
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0) {
            return Status::from_errno("fstat " + shown);
        }
        if (!S_ISLNK(st.st_mode)) {
            if (auto s = check_file(shown, st); !s.ok()) {
                return s;
            }
            real = current;
            out.fd = std::move(fd);
            out.st = st;
            out.shown = shown;
            return {};
        }
        if (st.st_uid != 0) {
            return Status::failure(shown + " is a symlink owned by uid " +
                                   std::to_string(st.st_uid) +
                                   ", not root; the plugin never follows a user's symlink");
        }
        std::string target;
        if (auto s = read_link(fd.get(), shown, target); !s.ok()) {
            return s;
        }
        if (target.find('/') != std::string::npos || target == "." || target == "..") {
            return Status::failure(shown + " links to " + target + ", outside " + dir_shown +
                                   "; the plugin follows a driver's soname links only within "
                                   "their own directory (point the driver root at the "
                                   "directory that holds the real files)");
        }
        current = target;
    }
    return Status::failure(dir_shown + "/" + name + ": more than " +
                           std::to_string(kMaxSonameHops) + " links in a row");
}

} // namespace sjail
