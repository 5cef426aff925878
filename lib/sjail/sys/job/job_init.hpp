// SPDX-License-Identifier: Apache-2.0
// The job's init: PID 1 of the job's PID namespace on a node.
//
// It is forked (never exec'd: the plugin is a library) by the process that
// creates the job's namespaces, as the first process of the new PID
// namespace. It makes the tasks' view (a copy of slurmstepd's view with a
// /proc of the job's own PID namespace, so a task sees only its job's
// processes), reports, then reaps the processes orphaned to it. It lives
// until the job ends on the node: SIGTERM from root makes it kill every
// process of the job, freeing those a FUSE daemon holds, and exit (SIGKILL
// ends it and the namespace at once). Every look it also frees a process of
// the job that SIGKILL did not end (fuse_abort.hpp). Users cannot signal it
// (it is root's) and see it as PID 1.
//
// It also holds a lifeline: when the job is gone from the node but nobody
// deleted it (a job epilog that ran without chroot.so because plugstack.conf
// changed meanwhile, slurmd stopped for good), the init notices (JobWatch in
// job_layout.hpp: no process of the job in its PID namespace and no
// slurmstepd of the job on the node for a grace period), deletes the job's
// namespaces and directory itself, and exits.
#pragma once

#include "sjail/core/proc_options.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace sjail {

// Names the calling process as ps shows it (its comm and its command line,
// which a fork of slurmd or slurmstepd would otherwise share with the
// daemon), so that nothing on the node takes it for the daemon.
void take_process_name(const char *name) noexcept;

struct JobLifeline {
    std::uint32_t job = 0;
    int node_proc = -1; // the node's /proc (all its processes), O_DIRECTORY
    int node_mnt = -1;  // the node's own mount namespace, for end_job
    // Deletes what the job has on the node; called once, when it is gone.
    std::function<void()> end_job;
};

// Never returns. `ready_fd` receives "ok\n" once the tasks' view is made, or
// "error MESSAGE\n" (then the process exits). Then it reads `keep_fd`: "k"
// means the job's namespaces were kept and it lives on; EOF (its creator
// was killed at the deadline, or the namespaces were dropped) ends it, so
// no init outlives a failed attempt. The lifeline's fds are kept open.
[[noreturn]] void run_job_init(const ProcOptions &proc, int ready_fd, int keep_fd,
                               const JobLifeline &lifeline) noexcept;

// Never returns. Forked into a running job's PID namespace, from a new view
// of slurmstepd's (the job's views are made anew from a rebuilt node
// namespace): makes a new tasks' view the same way, with a /proc of the job's
// PID namespace, and reports as run_job_init does. It lives only until its
// view is kept: "k" or EOF on `keep_fd` ends it (the job's init reaps it).
[[noreturn]] void run_tasks_view_maker(const ProcOptions &proc, int ready_fd, int keep_fd) noexcept;

// What a session's view has of its own besides its /proc: /dev/shm and,
// unless jobs share the node's (job_tmp=node), /tmp: each a tmpfs of the
// size the job's would have (job_tmp_size=, job_shm_size=; empty: tmpfs's
// default).
struct SessionMounts {
    bool own_tmp = true;
    std::string tmp_size;
    std::string shm_size;
    bool var_tmp_is_tmp = true; // var_tmp=job: /tmp bound again at /var/tmp
};

// The same for a session that is in no job (pam_slurm_jail, no_job=private:
// an SSH login, the su of sbatch --get-user-env): PID 1 of the session's own
// PID and IPC namespaces, forked by the session's privileged process (sshd's
// monitor, su), shown as "sjail-ssh-init". It makes the session's view (its
// own /proc, /tmp and /dev/shm: `mounts`),
// reports on `ready_fd` as above, then reaps orphans until EOF on
// `life_fd` (the session's processes that hold its write end are gone) or
// until its parent dies; then it ends, and the kernel kills every process
// left in the session's PID namespace. Nothing of it is kept on the node.
[[noreturn]] void run_session_init(const ProcOptions &proc, const SessionMounts &mounts,
                                   int ready_fd, int life_fd) noexcept;

} // namespace sjail
