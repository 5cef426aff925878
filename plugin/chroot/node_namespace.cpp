#include "node_namespace.hpp"

#include "safe_open.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace sjail {
namespace {

std::string sys_error(const std::string &what) {
    return what + ": " + std::strerror(errno);
}

// ---- building the view (runs in the builder, inside its fresh namespace) ----

Status mount_fresh_proc(int jail_root) {
    Fd target;
    if (auto s = open_mount_target(jail_root, "/proc", TargetType::Directory, target); !s.ok()) {
        return s;
    }
    Fd fs(::fsopen("proc", FSOPEN_CLOEXEC));
    if (!fs.valid() || ::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) {
        return Status::failure(sys_error("creating a proc filesystem"));
    }
    Fd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC,
                     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
    if (!mnt.valid()) {
        return Status::failure(sys_error("mounting /proc (in a container, /proc must not be "
                                         "masked: podman --security-opt unmask=ALL)"));
    }
    if (::move_mount(mnt.get(), "", target.get(), "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return Status::failure(sys_error("attaching /proc in the jail"));
    }
    return {};
}

Status mount_bind(int jail_root, const MountOp &op) {
    const bool recursive = op.kind == MountKind::RecursiveBind;
    const unsigned rec = recursive ? AT_RECURSIVE : 0U;
    Fd tree(::open_tree(AT_FDCWD, op.source.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | rec));
    if (!tree.valid()) {
        if (errno == ENOENT) {
            return Status::failure("bind source " + op.source +
                                   " is missing on this node; create it, or remove its bind= "
                                   "from plugstack.conf");
        }
        return Status::failure(sys_error("bind source " + op.source));
    }
    struct stat st {};
    if (::fstat(tree.get(), &st) != 0) {
        return Status::failure(sys_error("fstat " + op.source));
    }
    Fd target;
    const TargetType type = S_ISDIR(st.st_mode) ? TargetType::Directory : TargetType::File;
    if (auto s = open_mount_target(jail_root, op.target, type, target); !s.ok()) {
        return s;
    }
    mount_attr attr{};
    attr.attr_set = (op.read_only ? MOUNT_ATTR_RDONLY : 0U) |
                    (op.nosuid_nodev ? (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) : 0U);
    if (attr.attr_set != 0 &&
        ::mount_setattr(tree.get(), "", AT_EMPTY_PATH | rec, &attr, sizeof(attr)) != 0) {
        return Status::failure(sys_error("setting mount options on " + op.source));
    }
    if (::move_mount(tree.get(), "", target.get(), "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return Status::failure(
            sys_error("mounting " + op.source + " on " + op.target + " in the jail"));
    }
    return {};
}

Status pivot_into(int jail_root) {
    if (::fchdir(jail_root) != 0) {
        return Status::failure(sys_error("chdir into the jail"));
    }
    if (::syscall(SYS_pivot_root, ".", ".") != 0) {
        return Status::failure(sys_error("pivot_root into the jail"));
    }
    if (::umount2(".", MNT_DETACH) != 0) {
        return Status::failure(sys_error("detaching the host root"));
    }
    if (::chdir("/") != 0) {
        return Status::failure(sys_error("chdir /"));
    }
    return {};
}

// ---- the state directory and stamp ----

// Creates an empty file (or keeps an existing one) without following symlinks.
Status create_file(const std::string &path, mode_t mode) {
    const Fd fd(::open(path.c_str(), O_CREAT | O_RDONLY | O_CLOEXEC | O_NOFOLLOW, mode));
    if (!fd.valid()) {
        return Status::failure(sys_error("create " + path));
    }
    return {};
}

Status make_private_mount(const std::string &dir) {
    struct statx stx {};
    if (::statx(AT_FDCWD, dir.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx) != 0) {
        return Status::failure(sys_error("statx " + dir));
    }
    if ((stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) == 0) {
        if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0) {
            return Status::failure(sys_error("bind " + dir + " onto itself"));
        }
        const std::string marker = dir + "/self-bind";
        if (auto s = create_file(marker, 0600); !s.ok()) {
            return s;
        }
    }
    if (::mount(nullptr, dir.c_str(), nullptr, MS_PRIVATE, nullptr) != 0) {
        return Status::failure(sys_error("make " + dir + " a private mount"));
    }
    return {};
}

std::string read_small_file(const std::string &path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    std::string text;
    if (!fd.valid()) {
        return text;
    }
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(fd.get(), buf, sizeof(buf))) > 0) {
        text.append(buf, static_cast<std::size_t>(n));
    }
    return text;
}

Status write_file_atomically(const std::string &path, const std::string &text) {
    const std::string tmp = path + ".tmp";
    Fd fd(::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid() ||
        ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
        return Status::failure(sys_error("write " + tmp));
    }
    fd.reset();
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        return Status::failure(sys_error("rename " + tmp));
    }
    return {};
}

// Opens STATE/ns when it holds a namespace built for `stamp`; otherwise leaves `out` empty.
void open_if_current(const std::string &state, const std::string &stamp, Fd &out) {
    if (read_small_file(state + "/stamp") != stamp) {
        return;
    }
    Fd fd(::open((state + "/ns").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    struct statfs fs {};
    if (fd.valid() && ::fstatfs(fd.get(), &fs) == 0 &&
        static_cast<unsigned long>(fs.f_type) == NSFS_MAGIC) {
        out = std::move(fd);
    }
}

// ---- the builder process ----

std::string read_all(int fd) {
    std::string text;
    char buf[1024];
    ssize_t n = 0;
    while ((n = ::read(fd, buf, sizeof(buf))) > 0) {
        text.append(buf, static_cast<std::size_t>(n));
    }
    return text;
}

[[noreturn]] void run_builder(const Config &config, const std::vector<MountOp> &plan, int cpu,
                              int report_fd, int hold_fd) {
    Status s;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(static_cast<std::size_t>(cpu), &one);
    (void)::sched_setaffinity(0, sizeof(one), &one);
    if (::unshare(CLONE_NEWNS) != 0) {
        s = Status::failure(sys_error("unshare(CLONE_NEWNS)"));
    } else {
        s = build_jail_view(config, plan);
    }
    const std::string &msg = s.message();
    const ssize_t written = ::write(report_fd, msg.data(), msg.size());
    ::close(report_fd);
    char byte = 0;
    const ssize_t held = ::read(hold_fd, &byte, 1); // EOF once the namespace is bound
    ::_exit(s.ok() && written >= 0 && held >= 0 ? 0 : 1);
}

// Keeps the namespace of process `pid` alive on `ns_path`. Returns 0 or errno.
int bind_namespace_of(pid_t pid, const std::string &ns_path) {
    const std::string child_ns = "/proc/" + std::to_string(pid) + "/ns/mnt";
    Fd tree(::open_tree(AT_FDCWD, child_ns.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
    Fd target(::open(ns_path.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW));
    if (!tree.valid() || !target.valid() ||
        ::move_mount(tree.get(), "", target.get(), "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return errno;
    }
    return 0;
}

// One builder process pinned to `cpu`. Returns the build's own failure, or
// sets `bind_errno` when the finished namespace could not be kept.
Status attempt_build(const Config &config, const std::vector<MountOp> &plan,
                     const std::string &ns_path, int cpu, int &bind_errno) {
    bind_errno = 0;
    int report[2];
    int hold[2];
    if (::pipe2(report, O_CLOEXEC) != 0) {
        return Status::failure(sys_error("pipe"));
    }
    if (::pipe2(hold, O_CLOEXEC) != 0) {
        ::close(report[0]);
        ::close(report[1]);
        return Status::failure(sys_error("pipe"));
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(report[0]);
        ::close(hold[1]);
        run_builder(config, plan, cpu, report[1], hold[0]);
    }
    ::close(report[1]);
    ::close(hold[0]);
    Fd hold_write(hold[1]);
    Fd report_read(report[0]);
    if (pid < 0) {
        return Status::failure(sys_error("fork"));
    }
    const std::string failure = read_all(report_read.get());
    if (failure.empty()) {
        bind_errno = bind_namespace_of(pid, ns_path);
    }
    hold_write.reset();
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    return failure.empty() ? Status() : Status::failure(failure);
}

// The kernel refuses (ELOOP) to bind a mount namespace that looks older than
// the caller's, to prevent reference loops. Namespace ids come from per-CPU
// batches, so a namespace made on another CPU can look older although it is
// newer. Building again on another CPU gives it an id from that CPU's batch.
Status build_node_namespace(const Config &config, const std::string &state) {
    const auto plan = build_mount_plan(config);
    const std::string ns_path = state + "/ns";
    if (auto s = create_file(ns_path, 0400); !s.ok()) {
        return s;
    }
    (void)::umount2(ns_path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW); // drop a stale namespace

    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    (void)::sched_getaffinity(0, sizeof(allowed), &allowed);
    std::vector<int> cpus = {::sched_getcpu()};
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(static_cast<std::size_t>(cpu), &allowed) && cpu != cpus.front()) {
            cpus.push_back(cpu);
        }
    }
    int bind_errno = 0;
    for (const int cpu : cpus) {
        if (auto s = attempt_build(config, plan, ns_path, cpu, bind_errno); !s.ok()) {
            return s;
        }
        if (bind_errno != ELOOP) {
            break;
        }
    }
    if (bind_errno != 0) {
        errno = bind_errno;
        return Status::failure(sys_error("keeping the jail namespace on " + ns_path));
    }
    return {};
}

Status lock_state(const std::string &state, Fd &lock, int how) {
    lock.reset(::open((state + "/lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!lock.valid()) {
        return Status::failure(sys_error("open " + state + "/lock"));
    }
    while (::flock(lock.get(), how) != 0) {
        if (errno != EINTR) {
            return Status::failure(sys_error("flock " + state + "/lock"));
        }
    }
    return {};
}

} // namespace

Status build_jail_view(const Config &config, const std::vector<MountOp> &plan) {
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
        return Status::failure(sys_error("making the new namespace a slave of the host"));
    }
    if (auto s = ensure_root_dir(config.tmp_dir, 01777); !s.ok()) {
        return Status::failure("node-local tmp= directory: " + s.message());
    }
    Fd jail;
    if (auto s = open_root_owned_dir(config.jail, jail); !s.ok()) {
        return Status::failure("jail " + config.jail + ": " + s.message());
    }
    Fd root(::open_tree(jail.get(), "",
                        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
    if (!root.valid() || ::move_mount(root.get(), "", jail.get(), "",
                                      MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return Status::failure(sys_error("binding the jail " + config.jail + " onto itself"));
    }
    for (const auto &op : plan) {
        Status s = op.kind == MountKind::FreshProc ? mount_fresh_proc(root.get())
                                                   : mount_bind(root.get(), op);
        if (!s.ok()) {
            return s;
        }
    }
    return pivot_into(root.get());
}

std::string namespace_stamp(const Config &config, dev_t jail_dev, ino_t jail_ino) {
    return fingerprint(config) + " jail_dev=" + std::to_string(jail_dev) +
           " jail_ino=" + std::to_string(jail_ino) + "\n";
}

Status acquire_node_namespace(const Config &config, Fd &ns_fd) {
    Fd jail;
    if (auto s = open_root_owned_dir(config.jail, jail); !s.ok()) {
        return Status::failure("jail " + config.jail + ": " + s.message());
    }
    struct stat st {};
    if (::fstat(jail.get(), &st) != 0) {
        return Status::failure(sys_error("fstat " + config.jail));
    }
    const std::string stamp = namespace_stamp(config, st.st_dev, st.st_ino);
    const std::string &state = config.state_dir;
    if (auto s = ensure_root_dir(state, 0700); !s.ok()) {
        return Status::failure("state directory: " + s.message());
    }
    Fd lock;
    if (auto s = lock_state(state, lock, LOCK_SH); !s.ok()) {
        return s;
    }
    open_if_current(state, stamp, ns_fd);
    if (ns_fd.valid()) {
        return {};
    }
    if (auto s = lock_state(state, lock, LOCK_EX); !s.ok()) {
        return s;
    }
    open_if_current(state, stamp, ns_fd); // another step may have rebuilt it meanwhile
    if (ns_fd.valid()) {
        return {};
    }
    if (auto s = make_private_mount(state); !s.ok()) {
        return s;
    }
    (void)::unlink((state + "/stamp").c_str());
    if (auto s = build_node_namespace(config, state); !s.ok()) {
        return s;
    }
    if (auto s = write_file_atomically(state + "/stamp", stamp); !s.ok()) {
        return s;
    }
    open_if_current(state, stamp, ns_fd);
    if (!ns_fd.valid()) {
        return Status::failure("the jail namespace on " + state +
                               "/ns vanished right after it "
                               "was built");
    }
    return {};
}

Status release_node_namespace(const Config &config) {
    const std::string &state = config.state_dir;
    Fd lock;
    if (auto s = lock_state(state, lock, LOCK_EX); !s.ok()) {
        return s;
    }
    (void)::unlink((state + "/stamp").c_str());
    if (::umount2((state + "/ns").c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0 && errno != EINVAL &&
        errno != ENOENT) {
        return Status::failure(sys_error("unmount " + state + "/ns"));
    }
    const std::string marker = state + "/self-bind";
    if (::access(marker.c_str(), F_OK) == 0) {
        lock.reset();
        if (::umount2(state.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0 && errno != EINVAL) {
            return Status::failure(sys_error("unmount " + state));
        }
        (void)::unlink(marker.c_str());
    }
    return {};
}

} // namespace sjail
