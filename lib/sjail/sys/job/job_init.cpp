// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/job/job_init.hpp"

#include "sjail/core/job/job_layout.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/child_process.hpp"
#include "sjail/sys/fd.hpp"
#include "sjail/sys/job/fuse_abort.hpp"
#include "sjail/sys/node/proc_options.hpp"
#include "sjail/sys/private_mounts.hpp"
#include "sjail/sys/process_scan.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <functional>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <set>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace sjail {
namespace {

// A /proc of the PID namespace this process is in (the job's), over /proc.
Status mount_job_proc(const ProcOptions &proc) {
    Fd mnt;
    if (auto s = make_proc_mount(proc, mnt); !s.ok()) {
        return Status::failure("creating the job's /proc: " + s.message());
    }
    if (::move_mount(mnt.get(), "", AT_FDCWD, "/proc", MOVE_MOUNT_F_EMPTY_PATH) != 0) {
        return Status::from_errno("mounting the job's /proc");
    }
    return {};
}

Status make_tasks_view(const ProcOptions &proc) {
    if (::unshare(CLONE_NEWNS) != 0) {
        return Status::from_errno("unshare the tasks' view");
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
        return Status::from_errno("making the tasks' view a slave");
    }
    return mount_job_proc(proc);
}

void report(int fd, const std::string &line) {
    const ssize_t n = ::write(fd, line.data(), line.size());
    (void)n;
}

// The command line the init inherited (slurmd's or slurmstepd's) is
// overwritten with its own name: ps in the job shows "sjail-job-init", and
// nothing on the node takes the init for the daemon (a slurmstepd of its
// job, say). Shortening the area needs CAP_SYS_RESOURCE; without it the
// name is followed by NUL padding.
void rename_command_line(const char *name) noexcept {
    char stat[2048];
    const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    const ssize_t n = ::read(fd, stat, sizeof(stat));
    ::close(fd);
    const auto area = n > 0 ? arg_area_of_stat(std::string_view(stat, static_cast<std::size_t>(n)))
                            : std::nullopt;
    if (!area) {
        return;
    }
    auto *args = reinterpret_cast<char *>(area->start); // NOLINT(performance-no-int-to-ptr)
    const std::size_t size = area->end - area->start;
    std::memset(args, 0, size);
    const std::size_t used = std::min(std::strlen(name), size - 1);
    std::copy_n(name, used, args); // the NUL after it: from the memset
    (void)::prctl(PR_SET_MM, PR_SET_MM_ARG_END, area->start + used + 1, 0, 0);
}

// Out of the OOM killer's reach (its death would end the job): slurmd and
// slurmstepd run at -1000 and the init inherits it; this is for other
// callers, and needs CAP_SYS_RESOURCE. Named as users will see it in ps.
void protect_and_name(const char *name) noexcept {
    const int adj = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (adj >= 0) {
        const ssize_t n = ::write(adj, "-1000", 5);
        (void)n;
        ::close(adj);
    }
    take_process_name(name);
}

// Makes the tasks' view (then `more`, when given), names the process and
// reports "ok" or the error to `ready_fd`; a failure ends the process.
void make_view_and_report(const ProcOptions &proc, int ready_fd, const char *name,
                          const std::function<Status()> &more = {}) noexcept {
    try {
        Status s = make_tasks_view(proc);
        if (s.ok() && more) {
            s = more();
        }
        if (s.ok()) {
            protect_and_name(name);
        }
        report(ready_fd, s.ok() ? "ok\n" : "error " + s.message() + "\n");
        if (!s.ok()) {
            ::_exit(1);
        }
    } catch (...) {
        ::_exit(1);
    }
}

// Standard streams on /dev/null, every other inherited fd closed but the
// lifeline's: the init must hold nothing of the daemon it was forked from.
void let_go_of_the_parent(int job_proc, const JobLifeline &lifeline) noexcept {
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2 && null >= 0; ++fd) {
        (void)::dup2(null, fd);
    }
    close_inherited_fds({job_proc, lifeline.node_proc, lifeline.node_mnt});
}

// Reads up to sizeof(buf) - 1 bytes of DIR/NAME; "" when it cannot.
std::string_view read_at(int dir, const char *name, char *buf, std::size_t size) noexcept {
    const int fd = ::openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        return {};
    }
    const ssize_t n = ::read(fd, buf, size - 1);
    ::close(fd);
    return n > 0 ? std::string_view(buf, static_cast<std::size_t>(n)) : std::string_view();
}

// A process besides the init in the job's PID namespace (its own /proc).
bool others_in_namespace(int job_proc) noexcept {
    bool found = false;
    for_each_pid(job_proc, [&](const char *pid) {
        found = std::strcmp(pid, "1") != 0;
        return !found;
    });
    return found;
}

// A slurmstepd of `job` on the node (root's: a user's process may call
// itself anything), and whether one is the job's extern step.
void look_for_stepd(int node_proc, std::uint32_t job, bool &seen, bool &extern_seen) noexcept {
    for_each_pid(node_proc, [&](const char *pid) {
        char path[64];
        char buf[512];
        (void)std::snprintf(path, sizeof(path), "%s/cmdline", pid);
        const auto step = stepd_of_cmdline(read_at(node_proc, path, buf, sizeof(buf)));
        if (!step || step->job != job) {
            return true;
        }
        (void)std::snprintf(path, sizeof(path), "%s/status", pid);
        char status[4096];
        if (real_uid_of_status(read_at(node_proc, path, status, sizeof(status))) == 0U) {
            seen = true;
            extern_seen = extern_seen || step->extern_step;
        }
        return true;
    });
}

// An init takes no signal but as it waits for them: every signal is blocked
// (a PID namespace's init ignores what it has no handler for anyway). Returns
// the set it waits on: SIGCHLD, to reap orphans, and, with `term`, SIGTERM
// (only root can send it: the job's end, see end_the_job).
sigset_t block_all_signals(bool term = false) noexcept {
    sigset_t all;
    sigfillset(&all);
    (void)::sigprocmask(SIG_BLOCK, &all, nullptr);
    sigset_t wanted;
    sigemptyset(&wanted);
    sigaddset(&wanted, SIGCHLD);
    if (term) {
        sigaddset(&wanted, SIGTERM);
    }
    return wanted;
}

// A process of the job that was sent SIGKILL and is still there one look
// later waits for a FUSE request nobody will answer: the job's FUSE
// connections are aborted (fuse_abort.hpp), so it dies and Slurm can end
// the step without draining the node. `stuck` carries the last look's.
void free_the_stuck(int job_proc, const JobLifeline &lifeline, std::set<pid_t> &stuck) noexcept {
    std::set<pid_t> now = stuck_dying_processes(job_proc);
    const bool again =
        std::any_of(now.begin(), now.end(), [&stuck](pid_t pid) { return stuck.count(pid) != 0; });
    if (again && lifeline.node_mnt >= 0) {
        (void)abort_job_fuse(job_proc, lifeline.node_mnt);
    }
    stuck = std::move(now);
}

// SIGTERM from root (delete_job_namespace): every process of the job is
// killed, the job's FUSE connections aborted for those that cannot die,
// and the init exits once it is alone, or after kEndWithin.
[[noreturn]] void end_the_job(int job_proc, const JobLifeline &lifeline) noexcept {
    constexpr int kEndWithin = 50; // tenths of a second
    for (int tenth = 0; tenth < kEndWithin; ++tenth) {
        (void)::kill(-1, SIGKILL); // every process of the namespace but the init
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        if (!others_in_namespace(job_proc)) {
            break;
        }
        if (tenth % 10 == 5 && !stuck_dying_processes(job_proc).empty() && lifeline.node_mnt >= 0) {
            (void)abort_job_fuse(job_proc, lifeline.node_mnt);
        }
        const timespec tenth_s{0, 100'000'000};
        (void)::nanosleep(&tenth_s, nullptr);
    }
    ::_exit(0);
}

// Reaps orphans; every JobWatch::kCheckEvery looks whether the job is still
// on the node, and once it is gone ends it and exits.
[[noreturn]] void live_until_the_job_is_gone(int job_proc, const JobLifeline &lifeline) noexcept {
    const sigset_t wanted = block_all_signals(true);
    std::set<pid_t> stuck;
    const timespec every{JobWatch::kCheckEvery.count(), 0};
    JobWatch watch(JobWatch::Clock::now());
    auto last_look = JobWatch::Clock::now();
    if (lifeline.node_proc >= 0) {
        // A step of the job is making it now: whether the job has an extern
        // step is seen at once, before a short job's steps are all gone.
        bool stepd = false;
        bool extern_step = false;
        look_for_stepd(lifeline.node_proc, lifeline.job, stepd, extern_step);
        watch.saw(last_look, true, extern_step);
    }
    while (true) {
        if (::sigtimedwait(&wanted, nullptr, &every) == SIGTERM) {
            end_the_job(job_proc, lifeline);
        }
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        const auto now = JobWatch::Clock::now();
        if (now - last_look < JobWatch::kCheckEvery || lifeline.node_proc < 0) {
            continue;
        }
        last_look = now;
        free_the_stuck(job_proc, lifeline, stuck);
        const bool others = others_in_namespace(job_proc);
        bool stepd = false;
        bool extern_step = false;
        if (watch.wants_node_scan(now, others)) {
            look_for_stepd(lifeline.node_proc, lifeline.job, stepd, extern_step);
        }
        watch.saw(now, others || stepd, extern_step);
        if (watch.gone(now)) {
            try {
                if (lifeline.end_job) {
                    lifeline.end_job();
                }
            } catch (...) {
            }
            ::_exit(0);
        }
    }
}

// Reaps orphans until `life_fd` reports EOF (every holder of its write end
// is gone), then ends: the kernel then kills every process left in the PID
// namespace.
[[noreturn]] void reap_until_eof(int life_fd) noexcept {
    const sigset_t child = block_all_signals();
    const Fd sigs(::signalfd(-1, &child, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sigs.valid()) {
        ::_exit(1);
    }
    while (true) {
        std::array<pollfd, 2> p{pollfd{life_fd, POLLIN, 0}, pollfd{sigs.get(), POLLIN, 0}};
        if (::poll(p.data(), p.size(), -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            ::_exit(1);
        }
        if (p[1].revents != 0) {
            signalfd_siginfo info{};
            while (::read(sigs.get(), &info, sizeof(info)) > 0) {
            }
            while (::waitpid(-1, nullptr, WNOHANG) > 0) {
            }
        }
        if (p[0].revents != 0) {
            char byte = 0;
            const ssize_t n = ::read(life_fd, &byte, 1);
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
                ::_exit(0);
            }
        }
    }
}

} // namespace

void take_process_name(const char *name) noexcept {
    (void)::prctl(PR_SET_NAME, name, 0, 0, 0);
    rename_command_line(name);
}

void run_session_init(const ProcOptions &proc, const SessionMounts &mounts, int ready_fd,
                      int life_fd) noexcept {
    // Also ends with its parent (the session's privileged process): the
    // lifeline alone would wait for every process that inherited its end.
    (void)::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    make_view_and_report(proc, ready_fd, "sjail-ssh-init", [&mounts] {
        if (mounts.own_tmp) {
            if (auto s = mount_private_tmpfs(mounts.tmp_size, "/tmp"); !s.ok()) {
                return s;
            }
        }
        if (mounts.var_tmp_is_tmp) {
            if (auto s = share_tmp_as_var_tmp(); !s.ok()) {
                return s;
            }
        }
        return mount_private_tmpfs(mounts.shm_size, "/dev/shm");
    });
    close_inherited_fds({life_fd});
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2 && null >= 0; ++fd) {
        (void)::dup2(null, fd);
    }
    if (null > 2) {
        ::close(null);
    }
    reap_until_eof(life_fd);
}

void run_job_init(const ProcOptions &proc, int ready_fd, int keep_fd,
                  const JobLifeline &lifeline) noexcept {
    int job_proc = -1;
    make_view_and_report(proc, ready_fd, "sjail-job-init", [&job_proc] {
        job_proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return job_proc >= 0 ? Status() : Status::from_errno("opening the job's /proc");
    });
    // Nothing of the creator's but the lifeline: its caller waits for EOF on
    // the report pipe, which this process must not hold.
    close_inherited_fds({keep_fd, job_proc, lifeline.node_proc, lifeline.node_mnt});
    char byte = 0;
    ssize_t n = 0;
    while ((n = ::read(keep_fd, &byte, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1 || byte != 'k') {
        ::_exit(0);
    }
    let_go_of_the_parent(job_proc, lifeline);
    live_until_the_job_is_gone(job_proc, lifeline);
}

void run_tasks_view_maker(const ProcOptions &proc, int ready_fd, int keep_fd) noexcept {
    make_view_and_report(proc, ready_fd, "sjail-job-view");
    close_inherited_fds({keep_fd});
    char byte = 0;
    while (::read(keep_fd, &byte, 1) < 0 && errno == EINTR) {
    }
    ::_exit(0);
}

} // namespace sjail
