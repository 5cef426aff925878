// SPDX-License-Identifier: Apache-2.0
#include "session_entry.hpp"

#include "sjail/core/job/job_layout.hpp"
#include "sjail/core/parse_config.hpp"
#include "sjail/sys/child_process.hpp"
#include "sjail/sys/job/job_init.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/jail_generation.hpp"
#include "sjail/sys/node/jail_view.hpp"
#include "sjail/sys/node/node_role.hpp"
#include "sjail/sys/node/proc_options.hpp"
#include "sjail/sys/plugstack.hpp"
#include "sjail/sys/safe_open.hpp"

#include <array>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sjail {
namespace {

constexpr std::size_t kMaxFile = 4U << 20U;

Status read_fd(int fd, const std::string &what, std::string &out) {
    std::array<char, 8192> buf{};
    out.clear();
    while (true) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return Status::from_errno("read " + what);
        }
        if (n == 0) {
            return {};
        }
        out.append(buf.data(), static_cast<std::size_t>(n));
        if (out.size() > kMaxFile) {
            return Status::failure(what + " is larger than 4 MiB");
        }
    }
}

// A regular file that only root can change.
Status check_root_file(int fd, const std::string &what) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return Status::from_errno("fstat " + what);
    }
    if (!S_ISREG(st.st_mode)) {
        return Status::failure(what + " is not a regular file");
    }
    if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return Status::failure(what + " must be owned by root and not writable by group or others; "
                                      "fix it with chown root: and chmod go-w");
    }
    return {};
}

// DIR/REL below an open directory, through no symlink and not above it.
Status open_beneath(int dir, const std::string &rel, std::uint64_t flags, Fd &out) {
    out = open_below(dir, rel.c_str(), flags, Resolve::Beneath);
    return out.valid() ? Status() : Status::from_errno(rel);
}

// The user's entry in the jail's own /etc/passwd, read from the node's view.
Status find_jail_user(const Config &config, const SessionUser &user, PasswdEntry &out) {
    Fd jail;
    if (auto s = open_root_owned_dir(config.jail, jail); !s.ok()) {
        return Status::failure("jail " + config.jail + ": " + s.message());
    }
    const std::string shown = config.jail + "/etc/passwd";
    Fd file;
    if (auto s = open_beneath(jail.get(), "etc/passwd", O_RDONLY | O_NOCTTY | O_NONBLOCK, file);
        !s.ok()) {
        return Status::failure("jail " + config.jail + ": " + s.message());
    }
    std::string text;
    if (auto s = check_root_file(file.get(), shown); !s.ok()) {
        return s;
    }
    if (auto s = read_fd(file.get(), shown, text); !s.ok()) {
        return s;
    }
    const auto entry = find_passwd_entry(text, user.name);
    if (!entry) {
        return Status::failure("user " + user.name + " is not in the jail's /etc/passwd (" + shown +
                               "); add the user there with the same uid as on this "
                               "node");
    }
    if (entry->uid != user.uid) {
        return Status::failure("user " + user.name + " has uid " + std::to_string(entry->uid) +
                               " in the jail's /etc/passwd but uid " + std::to_string(user.uid) +
                               " on this node; make them the same");
    }
    out = *entry;
    return {};
}

SessionFacts gather_facts(const Config &config, const ModuleArgs &args, const SessionUser &user,
                          Status &error) {
    SessionFacts facts;
    facts.node = args.node;
    facts.no_job = args.no_job;
    facts.uid = static_cast<std::uint32_t>(user.uid);
    std::string cgroup;
    const Fd file(::open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC));
    if (!file.valid() || !read_fd(file.get(), "/proc/self/cgroup", cgroup).ok()) {
        error = Status::from_errno(
            "cannot read /proc/self/cgroup (the process already left the node's view; when "
            "pam_slurm_adopt runs before this module, give it join_container=false)");
        return facts;
    }
    facts.cgroup = job_of_cgroup(cgroup);
    if (user.pam_env_job != nullptr) {
        facts.pam_env_job = parse_job_id(user.pam_env_job);
        facts.pam_env_job_malformed = !facts.pam_env_job.has_value();
    }
    facts.node_has_jobs = !running_jobs(config.state_dir).empty();
    facts.slurmd_here = args.node == NodeRole::Auto && !facts.node_has_jobs && slurmd_runs_here();
    return facts;
}

Status load_config(const std::string &plugstack, Config &out) {
    const auto read = read_plugstack(plugstack);
    if (auto s = read.status(); !s.ok()) {
        return Status::failure("reading the chroot.so settings: " + s.message());
    }
    const auto line = chroot_args(read.plugins, plugstack, read.empty_includes);
    if (!line.status.ok()) {
        return line.status;
    }
    auto parsed = parse_config(line.args);
    if (!parsed.status.ok()) {
        return Status::failure("the chroot.so line of " + plugstack + ": " +
                               parsed.status.message());
    }
    out = std::move(parsed.config);
    return {};
}

// In the node's jail view: a new PID namespace for this process's children
// and a new IPC namespace (System V IPC, POSIX message queues) of the
// session's own, its init (PID 1, which makes the view with the namespace's
// own /proc, /tmp and /dev/shm), and this process in that view. The init's
// lifeline is this process's (and, inherited, its children's) until they
// end: the write end is kept open on purpose and closed on exec.
Status start_private_session(const SessionPlan &plan) {
    if (::unshare(CLONE_NEWPID | CLONE_NEWIPC) != 0) {
        return Status::from_errno("making the session's PID and IPC namespaces");
    }
    Pipe ready;
    Pipe life;
    if (auto s = make_pipe(ready); !s.ok()) {
        return s;
    }
    if (auto s = make_pipe(life); !s.ok()) {
        return s;
    }
    const SessionMounts mounts{plan.config.job_tmp != JobTmp::Node, plan.config.job_tmp_size,
                               plan.config.job_shm_size, plan.config.var_tmp == VarTmp::Job};
    const pid_t init = ::fork();
    if (init == 0) {
        ready.read.reset();
        life.write.reset();
        run_session_init(plan.proc, mounts, ready.write.get(), life.read.get());
    }
    if (init < 0) {
        return Status::from_errno("fork the session's init");
    }
    ready.write.reset();
    life.read.reset();
    const std::string line = read_line(ready.read.get());
    if (line != "ok\n") {
        life.write.reset();
        (void)::waitpid(init, nullptr, 0);
        return Status::failure(line.rfind("error ", 0) == 0 ? "the session's PID namespace: " +
                                                                  line.substr(6, line.size() - 7)
                                                            : "the session's init died");
    }
    const Fd view(
        ::open(("/proc/" + std::to_string(init) + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC));
    if (!view.valid()) {
        return Status::from_errno("open the session's view");
    }
    if (auto s = enter_namespace(view.get()); !s.ok()) {
        return s;
    }
    if (auto s = verify_root(plan.node.jail); !s.ok()) {
        return s;
    }
    (void)life.write.release();
    return {};
}

} // namespace

Status plan_session(const ModuleArgs &args, const SessionUser &user,
                    const JobOwnerCheck &check_owner, SessionPlan &out) {
    Config settings;
    if (auto s = load_config(args.plugstack, settings); !s.ok()) {
        return s;
    }
    // The session's jail: on a volume with generations, the live one.
    if (auto s = resolve_live_jail(settings, out.config); !s.ok()) {
        return s;
    }
    if (auto s = acquire_node_namespace(out.config, out.node); !s.ok()) {
        return s;
    }
    Status error;
    const SessionFacts facts = gather_facts(out.config, args, user, error);
    if (!error.ok()) {
        return error;
    }
    out.decision = decide_session(facts);
    if (out.decision.action == SessionAction::Refuse) {
        return Status::failure(out.decision.reason);
    }
    if (out.decision.action == SessionAction::Job) {
        const std::uint32_t job = out.decision.job;
        if (auto s = check_owner(job, user.uid); !s.ok()) {
            return s;
        }
        if (auto s = open_running_job_namespace(out.config.state_dir, job, out.job); !s.ok()) {
            return s;
        }
    }
    if (out.decision.action == SessionAction::Private) {
        if (auto s = load_proc_options(out.config, out.proc); !s.ok()) {
            return s;
        }
    }
    return find_jail_user(out.config, user, out.entry);
}

Status enter_session(SessionPlan &plan, std::string &notice) {
    const bool job = plan.decision.action == SessionAction::Job;
    if (auto s = enter_namespace(job ? plan.job.tasks.get() : plan.node.fd.get()); !s.ok()) {
        return s;
    }
    // A job keeps the jail it began on (a generation live then).
    const FileId jail = job ? plan.job.jail.value_or(plan.node.jail) : plan.node.jail;
    if (auto s = verify_root(jail); !s.ok()) {
        if (jail == plan.node.jail) {
            forget_node_namespace(plan.config);
        }
        return s;
    }
    if (job && ::setns(plan.job.pid.get(), CLONE_NEWPID) != 0) {
        return Status::from_errno("setns into the job's PID namespace");
    }
    if (job) {
        if (auto s = enter_job_ipc(plan.job.ipc); !s.ok()) {
            return s;
        }
    }
    if (plan.decision.action == SessionAction::Private) {
        if (auto s = start_private_session(plan); !s.ok()) {
            return s;
        }
    }
    Fd home;
    const Status opened =
        plan.entry.home.empty() || plan.entry.home.front() != '/'
            ? Status::failure("it is not an absolute path")
            : open_beneath(AT_FDCWD, plan.entry.home.substr(1), O_PATH | O_DIRECTORY, home);
    if (!opened.ok() || ::fchdir(home.get()) != 0) {
        notice = "pam_slurm_jail: home directory " + plan.entry.home +
                 " is not usable inside the jail (" +
                 (opened.ok() ? Status::errno_text(errno) : opened.message()) + "); starting in /";
        if (::chdir("/") != 0) {
            return Status::from_errno("chdir / in the jail");
        }
    }
    return {};
}

} // namespace sjail
