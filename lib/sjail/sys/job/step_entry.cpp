// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/job/step_entry.hpp"

#include "sjail/sys/cached_stat.hpp"
#include "sjail/sys/job/job_init.hpp"
#include "sjail/sys/job/job_namespace.hpp"
#include "sjail/sys/job/job_user.hpp"
#include "sjail/sys/node/jail_view.hpp"
#include "sjail/sys/node/node_namespace.hpp"

#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sjail {

Status enter_node_jail(const Config &config) {
    NodeNamespace node;
    if (auto s = acquire_node_namespace(config, node); !s.ok()) {
        return s;
    }
    if (auto s = enter_namespace(node.fd.get()); !s.ok()) {
        return s;
    }
    if (auto s = verify_root(node.jail); !s.ok()) {
        forget_node_namespace(config);
        return s;
    }
    return {};
}

Status enter_job_for_step(const Config &config, std::uint32_t job, StepJail &out,
                          std::optional<uid_t> user) {
    NodeNamespace node;
    if (auto s = acquire_node_namespace(config, node); !s.ok()) {
        return s;
    }
    JobNamespace job_ns;
    if (auto s = open_job_namespace(config, node, job, job_ns); !s.ok()) {
        return s;
    }
    if (user) {
        record_job_user(config.state_dir, job, *user);
    }
    struct stat pid_ns {};
    if (::fstat(job_ns.pid.get(), &pid_ns) != 0) {
        return Status::from_errno("fstat the job's PID namespace");
    }
    out.own_pid.reset(::open("/proc/thread-self/ns/pid", O_RDONLY | O_CLOEXEC));
    if (!out.own_pid.valid()) {
        return Status::from_errno("open /proc/thread-self/ns/pid");
    }
    if (auto s = enter_namespace(job_ns.tasks.get()); !s.ok()) {
        return s;
    }
    // A job keeps the jail it began on (a generation live then).
    const FileId jail = job_ns.jail.value_or(node.jail);
    if (auto s = verify_root(jail); !s.ok()) {
        if (jail == node.jail) {
            forget_node_namespace(config);
        }
        return s;
    }
    out.tasks = std::move(job_ns.tasks);
    out.stepd = std::move(job_ns.stepd);
    out.job_pid = std::move(job_ns.pid);
    out.job_ipc = std::move(job_ns.ipc);
    out.jail = jail;
    out.pid_ns = pid_ns.st_ino;
    return {};
}

Status start_children_in_job(StepJail &step) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3> saved{};
    if (::syscall(SYS_capget, &header, saved.data()) != 0) {
        return Status::from_errno("capget");
    }
    auto raised = saved;
    raised[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective |= CAP_TO_MASK(CAP_SYS_ADMIN);
    if (::syscall(SYS_capset, &header, raised.data()) != 0) {
        return Status::from_errno("raising CAP_SYS_ADMIN to enter the job's PID namespace");
    }
    const int joined = ::setns(step.job_pid.get(), CLONE_NEWPID);
    const int err = errno;
    (void)::syscall(SYS_capset, &header, saved.data());
    if (joined != 0) {
        return Status::from_errno("setns into the job's PID namespace", err);
    }
    step.children_in_job = true;
    return {};
}

void stop_children_in_job(StepJail &step) noexcept {
    if (step.children_in_job && ::setns(step.own_pid.get(), CLONE_NEWPID) == 0) {
        step.children_in_job = false;
    }
}

Status move_on_to_stepd_view(StepJail &step) {
    if (step.tasks_forked) {
        return {};
    }
    step.tasks_forked = true;
    // Threads slurmstepd created since init_post_opt share this thread's
    // filesystem attributes again: enter_namespace unshares them first.
    if (auto s = enter_namespace(step.stepd.get()); !s.ok()) {
        return s;
    }
    return verify_root(step.jail);
}

Status enter_tasks_view(const StepJail &step, PidCheck check) {
    struct stat born {};
    const bool in_job =
        ::stat("/proc/thread-self/ns/pid", &born) == 0 && born.st_ino == step.pid_ns;
    if (check == PidCheck::Required && !in_job) {
        return Status::failure("the task was not born in the job's PID namespace");
    }
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) {
        return Status::from_errno("getcwd");
    }
    if (::setns(step.tasks.get(), CLONE_NEWNS) != 0) {
        return Status::from_errno("setns into the job's tasks view");
    }
    if (auto s = enter_job_ipc(step.job_ipc); !s.ok()) {
        return s;
    }
    if (auto s = verify_root(step.jail); !s.ok()) {
        return s;
    }
    if (::chdir(cwd) != 0) {
        return Status::from_errno(std::string("chdir ") + cwd + " in the job's tasks view");
    }
    return in_job ? Status() : be_born_in_job(step);
}

namespace {

// The exit status a waiter passes on for a child that ended with `status`.
int passed_on(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The keeper of a script born again in the job (in the job's PID namespace,
// root, in a process group of its own): it forks the script, which goes on
// in the caller's place, and ends its process group once the script exits
// or the waiter dies (Slurm's kill of the script's group), as Slurm does
// without a jail. Returns in the script only.
void keep_script(const sigset_t &kept_signals, const sigset_t &script_mask) {
    (void)::setpgid(0, 0);
    take_process_name("sjail-script-keeper");
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != 0) {
        // The waiter is outside the job's PID namespace: its pid reads 0
        // while it lives, and another once it is gone.
        ::_exit(128 + SIGKILL);
    }
    const pid_t script = ::fork();
    if (script < 0) {
        ::_exit(127);
    }
    if (script == 0) {
        (void)::sigprocmask(SIG_SETMASK, &script_mask, nullptr);
        return;
    }
    for (;;) {
        siginfo_t info{};
        if (::sigwaitinfo(&kept_signals, &info) < 0 || info.si_signo == SIGCHLD) {
            // The script exited: its group ends before its pid is released.
            siginfo_t ended{};
            if (::waitid(P_PID, static_cast<id_t>(script), &ended, WEXITED | WNOHANG | WNOWAIT) !=
                    0 ||
                ended.si_pid != script) {
                continue;
            }
        } else {
            (void)::kill(script, SIGKILL); // the waiter died: Slurm's kill
        }
        (void)::kill(-script, SIGKILL);
        int status = 0;
        while (::waitpid(script, &status, 0) < 0 && errno == EINTR) {
        }
        ::_exit(passed_on(status));
    }
}

} // namespace

Status be_born_in_job(const StepJail &step) {
    if (::setns(step.job_pid.get(), CLONE_NEWPID) != 0) {
        return Status::from_errno("setns into the job's PID namespace");
    }
    // The waiter leads the group Slurm kills; the keeper and the script live
    // in the job, where Slurm's kill of that group cannot reach them, and the
    // script makes a group of its own (slurmstepd's setpgid after the join).
    (void)::setpgid(0, 0);
    sigset_t kept_signals;
    sigset_t script_mask;
    sigemptyset(&kept_signals);
    sigaddset(&kept_signals, SIGCHLD);
    sigaddset(&kept_signals, SIGTERM);
    if (::sigprocmask(SIG_BLOCK, &kept_signals, &script_mask) != 0) {
        return Status::from_errno("sigprocmask");
    }
    const pid_t keeper = ::fork();
    if (keeper < 0) {
        const int err = errno;
        (void)::sigprocmask(SIG_SETMASK, &script_mask, nullptr);
        return Status::from_errno("fork into the job's PID namespace", err);
    }
    if (keeper == 0) {
        keep_script(kept_signals, script_mask);
        return {};
    }
    int status = 0;
    while (::waitpid(keeper, &status, 0) < 0 && errno == EINTR) {
    }
    ::_exit(passed_on(status));
}

Status enter_job_ipc(const Fd &ipc_fd) {
    if (ipc_fd.valid() && ::setns(ipc_fd.get(), CLONE_NEWIPC) != 0) {
        return Status::from_errno("setns into the job's IPC namespace");
    }
    return {};
}

Status enter_namespace(int ns_fd) {
    if (::unshare(CLONE_FS) != 0) {
        return Status::from_errno("unshare(CLONE_FS)");
    }
    if (::setns(ns_fd, CLONE_NEWNS) != 0) {
        return Status::from_errno("setns into the node's jail namespace (slurmd needs "
                                  "CAP_SYS_ADMIN and CAP_SYS_CHROOT)");
    }
    return {};
}

Status verify_root(const FileId &jail) {
    struct stat st {};
    if (stat_cached(AT_FDCWD, "/", 0, st) != 0) {
        return Status::from_errno("stat / in the jail namespace");
    }
    if (!(file_id_of(st) == jail)) {
        return Status::failure("the node's kept jail namespace does not have the jail as its "
                               "root; it was dropped and the next step rebuilds it");
    }
    return {};
}

Status current_mount_namespace(ino_t &ino) {
    struct stat st {};
    if (::stat("/proc/thread-self/ns/mnt", &st) != 0) {
        return Status::from_errno("stat /proc/thread-self/ns/mnt");
    }
    ino = st.st_ino;
    return {};
}

} // namespace sjail
