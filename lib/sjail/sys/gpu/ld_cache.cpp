// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/gpu/ld_cache.hpp"

#include "sjail/core/arch.hpp"
#include "sjail/core/gpu/ld_so_conf.hpp"
#include "sjail/core/gpu/ldconfig_program.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/sys/cached_stat.hpp"
#include "sjail/sys/child_process.hpp"
#include "sjail/sys/gpu/nvidia_driver.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"
#include "sjail/sys/trusted_path.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <set>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sjail {
namespace {

// ldconfig's built-in directories on Debian (SLIBDIR and LIBDIR, the
// node's multiarch ones, and the generic ones it always adds), scanned after
// the configured ones.
std::vector<std::string> builtin_dirs() {
    const std::string multiarch(kBuildArch.multiarch);
    return {"/lib/" + multiarch, "/usr/lib/" + multiarch, "/lib", "/usr/lib"};
}
constexpr int kMaxIncludeDepth = 16;
constexpr std::size_t kMaxOutput = 16384;
constexpr const char *kCacheName = "ld.so.cache";
constexpr const char *kConfName = "ld.so.conf";

Status refuse(const Status &why) {
    return Status::failure("refusing to build a loader cache over this jail, since a user could "
                           "then put a library into other users' jobs: in the jail, " +
                           why.message());
}

// Names in the directory `dir` (O_PATH) matching `pattern` as glob(3) would, sorted.
Status list_matching(const TrustedOpen &dir, const std::string &pattern,
                     std::vector<std::string> &names) {
    const int fd = ::openat(dir.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *listing = fd < 0 ? nullptr : ::fdopendir(fd);
    if (listing == nullptr) {
        if (fd >= 0) {
            ::close(fd);
        }
        return Status::from_errno("list " + dir.shown);
    }
    while (const dirent *e = ::readdir(listing)) {
        const std::string name = e->d_name;
        if (name != "." && name != ".." &&
            ::fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) == 0) {
            names.push_back(name);
        }
    }
    ::closedir(listing);
    std::sort(names.begin(), names.end()); // ldconfig globs in the C locale
    return {};
}

struct ConfWalk {
    int view = -1;
    std::vector<std::string> dirs;
    std::set<std::string> visited;
};

Status walk_conf(ConfWalk &walk, const std::string &path, int depth);

Status walk_include(ConfWalk &walk, const std::string &pattern, int depth) {
    const std::string dir = parent_dir(pattern);
    if (dir.find_first_of("*?[") != std::string::npos) {
        return Status::failure("/etc/ld.so.conf includes " + pattern +
                               ", with a wildcard in a directory name; list the directory "
                               "itself instead");
    }
    TrustedOpen opened;
    if (auto s = open_trusted(walk.view, "", dir, TrustedKind::Directory, opened); !s.ok()) {
        return opened.missing ? Status() : refuse(s);
    }
    std::vector<std::string> names;
    if (auto s = list_matching(opened, base_name(pattern), names); !s.ok()) {
        return s;
    }
    for (const auto &name : names) {
        if (auto s = walk_conf(walk, (dir == "/" ? "" : dir) + "/" + name, depth + 1); !s.ok()) {
            return s;
        }
    }
    return {};
}

Status walk_conf(ConfWalk &walk, const std::string &path, int depth) {
    if (depth > kMaxIncludeDepth) {
        return Status::failure("/etc/ld.so.conf includes files " +
                               std::to_string(kMaxIncludeDepth) + " levels deep, at " + path +
                               "; is an include pointing at itself?");
    }
    if (!walk.visited.insert(path).second) {
        return {};
    }
    TrustedOpen file;
    if (auto s = open_trusted(walk.view, "", path, TrustedKind::File, file, true); !s.ok()) {
        return file.missing ? Status() : refuse(s);
    }
    std::string text;
    if (auto s = read_whole_file(file.fd.get(), "jail file " + path, text, 1UL << 20); !s.ok()) {
        return s;
    }
    const LdSoConf conf = parse_ld_so_conf(text, path);
    walk.dirs.insert(walk.dirs.end(), conf.dirs.begin(), conf.dirs.end());
    for (const auto &pattern : conf.includes) {
        if (auto s = walk_include(walk, pattern, depth); !s.ok()) {
            return s;
        }
    }
    return {};
}

// A library directory and the glibc-hwcaps subdirectories ldconfig also scans.
Status check_lib_dir(int view, const std::string &dir, bool &exists) {
    exists = false;
    TrustedOpen opened;
    if (auto s = open_trusted(view, "", dir, TrustedKind::Directory, opened); !s.ok()) {
        return opened.missing ? Status() : refuse(s);
    }
    exists = true;
    const std::string hwcaps = (dir == "/" ? "" : dir) + "/glibc-hwcaps";
    TrustedOpen sub;
    if (auto s = open_trusted(view, "", hwcaps, TrustedKind::Directory, sub); !s.ok()) {
        return sub.missing ? Status() : refuse(s);
    }
    std::vector<std::string> names;
    if (auto s = list_matching(sub, "*", names); !s.ok()) {
        return s;
    }
    for (const auto &name : names) {
        // ldconfig scans the subdirectories (following links); it skips files.
        const Fd entry =
            open_below(sub.fd.get(), name.c_str(), O_PATH | O_NOFOLLOW, Resolve::Beneath);
        struct stat st {};
        if (!entry.valid() || ::fstat(entry.get(), &st) != 0 ||
            !(S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode))) {
            continue;
        }
        TrustedOpen level;
        if (auto s = open_trusted(view, "", hwcaps + "/" + name, TrustedKind::Directory, level);
            !s.ok()) {
            return refuse(s);
        }
    }
    return {};
}

// ---- running ldconfig ----

// A directory the parent checked, to be found again after the child's unshare
// (fds of the parent's mounts cannot be cloned in a new mount namespace).
struct Place {
    std::string relative; // its absolute path without the leading '/'
    dev_t dev = 0;
    ino_t ino = 0;
};

struct Child {
    const Place *view = nullptr;
    const Place *work = nullptr;
    int exe = -1;
    int out = -1;
    char **argv = nullptr;
    char **envp = nullptr;
};

[[noreturn]] void child_fail(int out, const char *what) {
    char message[512];
    const int n =
        std::snprintf(message, sizeof(message), "slurm-jail: %s: %s\n", what, std::strerror(errno));
    if (n > 0) {
        const ssize_t written =
            ::write(out, message, std::min(static_cast<std::size_t>(n), sizeof(message) - 1));
        (void)written; // nothing more to do in a failing child
    }
    ::_exit(127);
}

// Opens `place` again in this namespace, with no symlinks, as the same inode.
int reopen(const Place &place) {
    const int slash = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    const char *rel = place.relative.empty() ? "." : place.relative.c_str();
    const int fd =
        open_below(slash, rel, O_PATH | O_DIRECTORY | O_NOFOLLOW, Resolve::NoSymlinks).release();
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_dev != place.dev || st.st_ino != place.ino) {
        errno = fd < 0 ? errno : ESTALE;
        return -1;
    }
    return fd;
}

// In the forked child: a private copy of the caller's mounts, the view
// read-only, the work directory on the view's /tmp, then ldconfig.
[[noreturn]] void run_child(const Child &c) {
    if (::unshare(CLONE_NEWNS) != 0) {
        child_fail(c.out, "unshare(CLONE_NEWNS)");
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
        child_fail(c.out, "making the mount namespace a slave");
    }
    const int view = reopen(*c.view);
    const int work_dir = reopen(*c.work);
    if (view < 0 || work_dir < 0) {
        child_fail(c.out, "finding the jail view and work directory again");
    }
    const int tree = static_cast<int>(
        ::open_tree(view, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
    if (tree < 0) {
        child_fail(c.out, "cloning the jail view");
    }
    mount_attr ro{};
    ro.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if (::mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof(ro)) != 0) {
        child_fail(c.out, "making the jail view read-only");
    }
    if (::move_mount(tree, "", view, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        child_fail(c.out, "mounting the read-only jail view");
    }
    const int tmp =
        open_below(tree, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW, Resolve::Beneath).release();
    if (tmp < 0) {
        child_fail(c.out, "the jail's /tmp (a directory, not a symlink, is needed)");
    }
    const int work = static_cast<int>(
        ::open_tree(work_dir, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
    if (work < 0 ||
        ::move_mount(work, "", tmp, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        child_fail(c.out, "mounting the work directory on the view's /tmp");
    }
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(c.out, 1) < 0 || ::dup2(c.out, 2) < 0) {
        child_fail(c.out, "setting up stdin/stdout/stderr");
    }
    (void)::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
    ::fexecve(c.exe, c.argv, c.envp);
    child_fail(2, "exec ldconfig");
}

std::vector<char *> c_strings(std::vector<std::string> &strings) {
    std::vector<char *> out;
    out.reserve(strings.size() + 1);
    for (auto &s : strings) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

// Collects ldconfig's output until it exits; past the time limit it is killed.
Status await_ldconfig(pid_t pid, int out, int time_limit_ms, std::string &output, BuilderEnd &end) {
    const Fd pidfd = open_pidfd(pid);
    const int pidfd_err = errno;
    const auto deadline = ChildClock::now() + std::chrono::milliseconds(time_limit_ms);
    const bool in_time = pidfd.valid() && read_until_eof(out, deadline, output, kMaxOutput);
    end = wait_child(pid, pidfd.get(), deadline, time_limit_ms / 1000, !in_time);
    if (!pidfd.valid()) {
        return Status::from_errno("pidfd_open (Linux 5.3 or later needed)", pidfd_err);
    }
    if (end.kind == BuilderEnd::Kind::TimedOut) {
        return Status::failure("ldconfig did not finish within " + std::to_string(time_limit_ms) +
                               " ms and was killed; is the jail on a slow or hung file "
                               "system? (output: " +
                               output + ")");
    }
    return {};
}

// "exit status N" or "killed by signal N".
std::string how_it_ended(const BuilderEnd &end) {
    return end.kind == BuilderEnd::Kind::Signaled ? "killed by signal " + std::to_string(end.code)
                                                  : "exit status " + std::to_string(end.code);
}

// OUTPUT.work beside the output: root-owned, mode 0700, emptied.
Status prepare_work_dir(int parent, const std::string &output, Fd &work) {
    const std::string name = base_name(output) + ".work";
    const std::string shown = output + ".work";
    if (::mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST) {
        return Status::from_errno("mkdir " + shown);
    }
    work = open_below(parent, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW, Resolve::Beneath);
    struct stat st {};
    if (!work.valid() || ::fstat(work.get(), &st) != 0) {
        return Status::from_errno("open " + shown);
    }
    if (st.st_uid != 0 || (st.st_mode & 077) != 0) {
        return Status::failure(shown + " must be a root-owned directory of mode 0700; remove it");
    }
    for (const char *stale : {kCacheName, "ld.so.cache~", kConfName}) {
        if (::unlinkat(work.get(), stale, 0) != 0 && errno != ENOENT) {
            return Status::from_errno("remove " + shown + "/" + stale);
        }
    }
    return {};
}

Status write_conf(int work, const std::vector<std::string> &first_dirs) {
    std::string text = "# Written by slurm-jail: the node's driver first, then the jail's own.\n";
    for (const auto &dir : first_dirs) {
        text += dir + "\n";
    }
    text += "include /etc/ld.so.conf\n";
    const Fd fd(
        ::openat(work, kConfName, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd.valid() ||
        ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
        return Status::from_errno("write the ldconfig configuration");
    }
    return {};
}

Status place_of(const std::string &path, int fd, Place &out) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return Status::from_errno("fstat " + path);
    }
    out = {path.substr(1), st.st_dev, st.st_ino};
    return {};
}

Status run_ldconfig(const LoaderCacheRequest &request, int view, int work) {
    Place view_place;
    Place work_place;
    if (auto s = place_of(request.view_root, view, view_place); !s.ok()) {
        return s;
    }
    if (auto s = place_of(request.output + ".work", work, work_place); !s.ok()) {
        return s;
    }
    TrustedOpen exe;
    if (auto s = open_ldconfig_program(request.ldconfig, exe); !s.ok()) {
        return s;
    }
    std::vector<std::string> args = {
        "ldconfig",       "-X", "-i", "-r", request.view_root, "-C", "/tmp/ld.so.cache", "-f",
        "/tmp/ld.so.conf"};
    std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"};
    auto argv = c_strings(args);
    auto envp = c_strings(env);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        return Status::from_errno("pipe");
    }
    Fd read_end(pipe_fds[0]);
    Fd write_end(pipe_fds[1]);
    const pid_t pid = ::fork();
    if (pid < 0) {
        return Status::from_errno("fork");
    }
    if (pid == 0) {
        run_child(
            {&view_place, &work_place, exe.fd.get(), write_end.get(), argv.data(), envp.data()});
    }
    write_end.reset();
    std::string output;
    BuilderEnd end;
    if (auto s = await_ldconfig(pid, read_end.get(), request.time_limit_ms, output, end); !s.ok()) {
        return s;
    }
    if (end.kind != BuilderEnd::Kind::Exited || end.code != 0) {
        return Status::failure("ldconfig over the jail view failed (" + how_it_ended(end) +
                               "): " + output);
    }
    return {};
}

Status check_result(const LoaderCacheRequest &request, int work, LdCache &cache) {
    const Fd fd = open_below(work, kCacheName, O_RDONLY | O_NOFOLLOW, Resolve::Beneath);
    if (!fd.valid()) {
        return Status::from_errno("ldconfig wrote no cache: open " + request.output + ".work/" +
                                  kCacheName);
    }
    std::string bytes;
    if (auto s = read_whole_file(fd.get(), request.output, bytes); !s.ok()) {
        return s;
    }
    if (auto s = parse_ld_cache(bytes, cache); !s.ok()) {
        return Status::failure("the cache ldconfig wrote cannot be read: " + s.message());
    }
    for (const auto &name : request.expect_first) {
        const LdCacheEntry *e = find_ld_cache_entry(cache, name, kBuildArch);
        const bool first =
            e != nullptr && std::find(request.first_dirs.begin(), request.first_dirs.end(),
                                      parent_dir(e->path)) != request.first_dirs.end();
        if (!first) {
            return Status::failure("in the new loader cache " + name + " resolves to " +
                                   (e == nullptr ? std::string("nothing") : e->path) +
                                   ", not to the node's driver; is " + name +
                                   " missing from the driver tree?");
        }
    }
    return {};
}

Status check_request(const LoaderCacheRequest &r) {
    for (const auto &[what, path] :
         {std::pair<const char *, const std::string &>{"view_root", r.view_root},
          {"output", r.output},
          {"ldconfig", r.ldconfig}}) {
        if (auto s = check_absolute_path(what, path); !s.ok()) {
            return s;
        }
    }
    for (const auto &dir : r.first_dirs) {
        if (auto s = check_absolute_path("first_dirs", dir); !s.ok()) {
            return s;
        }
    }
    if (r.time_limit_ms <= 0) {
        return Status::failure("the ldconfig time limit must be positive");
    }
    return {};
}

} // namespace

Status open_ldconfig_program(const std::string &configured, TrustedOpen &exe) {
    std::string script;
    for (const auto &path : ldconfig_candidates(configured)) {
        TrustedOpen file;
        if (auto s = open_trusted_on_node(path, TrustedKind::File, file, true); !s.ok()) {
            if (file.missing && path != configured) {
                continue;
            }
            return Status::failure("ldconfig " + path + ": " + s.message());
        }
        char head[4] = {};
        const ssize_t n = ::pread(file.fd.get(), head, sizeof(head), 0);
        if (n < 0) {
            return Status::from_errno("read ldconfig " + file.shown);
        }
        const auto kind = program_kind(std::string_view(head, static_cast<std::size_t>(n)));
        if (kind == ProgramKind::Elf) {
            exe = std::move(file);
            return {};
        }
        if (kind == ProgramKind::Script && script.empty()) {
            script = file.shown;
        }
    }
    return Status::failure(no_ldconfig_program_message(configured, script));
}

Status check_loader_inputs(int view_root, const std::vector<std::string> &first_dirs,
                           std::vector<std::string> *dirs_checked) {
    TrustedOpen etc;
    if (auto s = open_trusted(view_root, "", "/etc", TrustedKind::Directory, etc); !s.ok()) {
        return refuse(s);
    }
    ConfWalk walk;
    walk.view = view_root;
    if (auto s = walk_conf(walk, "/etc/ld.so.conf", 0); !s.ok()) {
        return s;
    }
    std::vector<std::string> dirs = first_dirs;
    dirs.insert(dirs.end(), walk.dirs.begin(), walk.dirs.end());
    const std::vector<std::string> builtin = builtin_dirs();
    dirs.insert(dirs.end(), builtin.begin(), builtin.end());
    std::set<std::string> seen;
    for (const auto &dir : dirs) {
        if (!seen.insert(dir).second) {
            continue;
        }
        bool exists = false;
        if (auto s = check_lib_dir(view_root, dir, exists); !s.ok()) {
            return s;
        }
        if (exists && dirs_checked != nullptr) {
            dirs_checked->push_back(dir);
        }
    }
    return {};
}

Status jail_loader_stamp(const std::string &jail, std::string &out) {
    Fd root;
    if (auto s = open_root_owned_dir(jail, root); !s.ok()) {
        return Status::failure("jail " + jail + ": " + s.message());
    }
    TrustedOpen cache;
    if (auto s = open_trusted(root.get(), "", "/etc/ld.so.cache", TrustedKind::File, cache);
        !s.ok()) {
        if (!cache.missing) {
            return refuse(s);
        }
        out = "jail-ld.so.cache none\n";
        return {};
    }
    out = identity_stamp_line("jail-ld.so.cache", file_identity(cache.st));
    return {};
}

bool cached_jail_loader_stamp(int jail_root, std::string &out) {
    const auto trusted = [](const struct stat &st) {
        return check_root_owned("", st.st_uid, st.st_mode).ok();
    };
    struct stat st {};
    const Fd etc = open_below(jail_root, "etc", O_PATH | O_NOFOLLOW, Resolve::BeneathCached);
    if (!etc.valid() || fstat_cached(etc.get(), st) != 0 || !S_ISDIR(st.st_mode) || !trusted(st)) {
        return false;
    }
    const Fd cache =
        open_below(etc.get(), "ld.so.cache", O_PATH | O_NOFOLLOW, Resolve::BeneathCached);
    if (!cache.valid()) {
        if (errno != ENOENT) {
            return false;
        }
        out = "jail-ld.so.cache none\n";
        return true;
    }
    if (fstat_cached(cache.get(), st) != 0 || !S_ISREG(st.st_mode) || !trusted(st)) {
        return false;
    }
    out = identity_stamp_line("jail-ld.so.cache", file_identity(st));
    return true;
}

Status build_loader_cache(const LoaderCacheRequest &request, LdCache *built) {
    if (auto s = check_request(request); !s.ok()) {
        return s;
    }
    Fd view;
    if (auto s = open_root_owned_dir(request.view_root, view); !s.ok()) {
        return Status::failure("jail view " + request.view_root + ": " + s.message());
    }
    if (auto s = check_loader_inputs(view.get(), request.first_dirs); !s.ok()) {
        return s;
    }
    TrustedOpen parent;
    if (auto s = open_trusted_on_node(parent_dir(request.output), TrustedKind::Directory, parent);
        !s.ok()) {
        return Status::failure("the loader cache's directory: " + s.message());
    }
    Fd work;
    if (auto s = prepare_work_dir(parent.fd.get(), request.output, work); !s.ok()) {
        return s;
    }
    if (auto s = write_conf(work.get(), request.first_dirs); !s.ok()) {
        return s;
    }
    if (auto s = run_ldconfig(request, view.get(), work.get()); !s.ok()) {
        return s;
    }
    LdCache cache;
    if (auto s = check_result(request, work.get(), cache); !s.ok()) {
        return s;
    }
    const std::string name = base_name(request.output);
    if (::renameat(work.get(), kCacheName, parent.fd.get(), name.c_str()) != 0) {
        return Status::from_errno("rename the new loader cache to " + request.output);
    }
    if (built != nullptr) {
        *built = std::move(cache);
    }
    return {};
}

} // namespace sjail
