#include "builder.hpp"

#include "fd.hpp"
#include "jail_view.hpp"
#include "node_gpu.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sjail {
namespace {

using Clock = std::chrono::steady_clock;

#ifdef SJAIL_BUILDER_FAULTS
BuilderFault g_fault = BuilderFault::None;

void fault_before_build() {
    switch (g_fault) {
    case BuilderFault::Silent:
        ::_exit(0);
    case BuilderFault::Crash:
        (void)::raise(SIGSEGV);
        ::_exit(1);
    case BuilderFault::Slow:
        ::usleep(300000);
        break;
    case BuilderFault::Hang:
        while (true) {
            ::pause();
        }
    default:
        break;
    }
}
#endif

// Unshares and builds the view, the node's GPU driver included; `root` is
// what "/" is afterwards.
Status build_in_child(const Config &config, const std::vector<MountOp> &plan,
                      const NodeDriver &driver, FileId &root) {
#ifdef SJAIL_BUILDER_FAULTS
    fault_before_build();
#endif
    if (::unshare(CLONE_NEWNS) != 0) {
        return Status::from_errno("unshare(CLONE_NEWNS)");
    }
#ifdef SJAIL_BUILDER_FAULTS
    if (g_fault == BuilderFault::NoPivot) {
        struct stat st {};
        (void)::stat("/", &st);
        root = file_id_of(st);
        return {};
    }
#endif
    Fd view;
    if (auto s = assemble_jail_view(config, plan, view); !s.ok()) {
        return s;
    }
    if (auto s = mount_node_gpu(config, view.get(), driver); !s.ok()) {
        return s;
    }
    return pivot_into_view(view.get(), root);
}

// Milliseconds left until `deadline`, at least 0.
int ms_left(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

void write_all(int fd, const std::string &text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        done += static_cast<std::size_t>(n);
    }
}

// The child. Reports, waits until the caller has kept its namespace (EOF on
// `hold_fd`), then ends with _exit.
[[noreturn]] void run_child(const Config &config, const std::vector<MountOp> &plan,
                            const NodeDriver &driver, int cpu, int report_fd,
                            int hold_fd) noexcept {
    int code = 1;
    try {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(static_cast<std::size_t>(cpu), &one);
        (void)::sched_setaffinity(0, sizeof(one), &one);
        FileId root;
        const Status s = build_in_child(config, plan, driver, root);
        write_all(report_fd,
                  s.ok() ? builder_success_line(root) : builder_failure_line(s.message()));
        code = s.ok() ? 0 : 1;
#ifdef SJAIL_BUILDER_FAULTS
        code = g_fault == BuilderFault::OkThenFail ? 3 : code;
#endif
    } catch (...) {
        static const char kLine[] = "sjail-builder error the builder ran out of memory\n";
        const ssize_t written = ::write(report_fd, kLine, sizeof(kLine) - 1);
        (void)written;
    }
    ::close(report_fd);
    char byte = 0;
    while (::read(hold_fd, &byte, 1) < 0 && errno == EINTR) {
    }
    ::_exit(code);
}

// Reads everything the child writes until EOF or the deadline.
bool read_report(int fd, Clock::time_point deadline, std::string &out) {
    char buf[1024];
    while (true) {
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, ms_left(deadline));
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            return false; // deadline
        }
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (n <= 0) {
            return true; // EOF (or an error, which judge_builder reports as no result)
        }
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > 65536) {
            return true;
        }
    }
}

// Waits for the child until the deadline; kills it past the deadline.
BuilderEnd wait_child(pid_t pid, int pidfd, Clock::time_point deadline, int timeout_s,
                      bool timed_out) {
    BuilderEnd end;
    end.timeout_s = timeout_s;
    if (!timed_out) {
        pollfd p{pidfd, POLLIN, 0};
        while (true) {
            const int ready = ::poll(&p, 1, ms_left(deadline));
            if (ready < 0 && errno == EINTR) {
                continue;
            }
            timed_out = ready == 0;
            break;
        }
    }
    if (timed_out) {
        ::kill(pid, SIGKILL);
        end.kind = BuilderEnd::Kind::TimedOut;
        pollfd p{pidfd, POLLIN, 0};
        (void)::poll(&p, 1, 1000); // a child stuck in the kernel may never die; don't wait for it
        int status = 0;
        (void)::waitpid(pid, &status, WNOHANG);
        return end;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
        end.kind = BuilderEnd::Kind::Signaled;
        end.code = WTERMSIG(status);
    } else {
        end.code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    return end;
}

// Keeps the mount namespace of process `pid` alive on `ns_path`. Returns 0 or errno.
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

struct Pipe {
    Fd read;
    Fd write;
};

Status make_pipe(Pipe &p) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        return Status::from_errno("pipe");
    }
    p.read.reset(fds[0]);
    p.write.reset(fds[1]);
    return {};
}

// One builder pinned to `cpu`. On success the namespace is kept on `ns_path`;
// `bind_errno` tells why it could not be kept (ELOOP: try another CPU).
Status attempt_build(const Config &config, const std::vector<MountOp> &plan,
                     const NodeDriver &driver, const FileId &jail, const std::string &ns_path,
                     int cpu, int &bind_errno) {
    bind_errno = 0;
    Pipe report;
    Pipe hold;
    if (auto s = make_pipe(report); !s.ok()) {
        return s;
    }
    if (auto s = make_pipe(hold); !s.ok()) {
        return s;
    }
    const auto deadline = Clock::now() + std::chrono::seconds(config.build_timeout_s);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(report.read.release());
        ::close(hold.write.release());
        run_child(config, plan, driver, cpu, report.write.get(), hold.read.get());
    }
    report.write.reset();
    hold.read.reset();
    if (pid < 0) {
        return Status::from_errno("fork the jail builder");
    }
    const Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    std::string text;
    const bool in_time = read_report(report.read.get(), deadline, text);
    const bool claims_success = in_time && text.starts_with("sjail-builder ok ");
    if (claims_success) {
        bind_errno = bind_namespace_of(pid, ns_path);
    }
    hold.write.reset(); // the child may exit now
    const BuilderEnd end = wait_child(pid, pidfd.get(), deadline, config.build_timeout_s, !in_time);
    Status judged = judge_builder(text, end, jail);
    if (!judged.ok() || bind_errno != 0) {
        (void)::umount2(ns_path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW); // never keep it
    }
    return judged;
}

} // namespace

#ifdef SJAIL_BUILDER_FAULTS
void set_builder_fault(BuilderFault fault) {
    g_fault = fault;
}
#endif

// The kernel refuses (ELOOP) to bind a mount namespace that looks older than
// the caller's, to prevent reference loops. Namespace ids come from per-CPU
// batches, so a namespace made on another CPU can look older although it is
// newer. Building again on another CPU gives it an id from that CPU's batch.
Status build_node_namespace(const Config &config, const std::vector<MountOp> &plan,
                            const NodeDriver &driver, const FileId &jail,
                            const std::string &ns_path) {
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
        if (auto s = attempt_build(config, plan, driver, jail, ns_path, cpu, bind_errno); !s.ok()) {
            return s;
        }
        if (bind_errno != ELOOP) {
            break;
        }
    }
    if (bind_errno != 0) {
        return Status::from_errno("keeping the jail namespace on " + ns_path, bind_errno);
    }
    return {};
}

} // namespace sjail
