// SPDX-License-Identifier: Apache-2.0
// The job's init: PID 1 of the job's PID namespace on a node.
//
// It is forked (never exec'd: the plugin is a library) by the process that
// creates the job's namespaces, as the first process of the new PID
// namespace. It makes the tasks' view (a copy of slurmstepd's view with a
// /proc of the job's own PID namespace, so a task sees only its job's
// processes), reports, then does nothing but reap the processes orphaned to
// it. It lives until the job ends on the node: killing it (SIGKILL, from
// outside) ends every process of the job, and the namespace with them.
// Users cannot signal it (it is root's) and see it as PID 1.
#pragma once

#include "proc_options.hpp"

namespace sjail {

// Never returns. `ready_fd` receives "ok\n" once the tasks' view is made, or
// "error MESSAGE\n" (then the process exits). Then it reads `keep_fd`: "k"
// means the job's namespaces were kept and it lives on; EOF (its creator
// was killed at the deadline, or the namespaces were dropped) ends it, so
// no init outlives a failed attempt.
[[noreturn]] void run_job_init(const ProcOptions &proc, int ready_fd, int keep_fd) noexcept;

// The same for an SSH session that is in no job (pam_slurm_jail,
// no_job=private): PID 1 of the session's own PID namespace, forked by the
// session's privileged process (sshd's monitor), shown as
// "sjail-ssh-init". It makes the session's view (its own /proc),
// reports on `ready_fd` as above, then reaps orphans until EOF on
// `life_fd` (the session's processes that hold its write end are gone) or
// until its parent dies; then it ends, and the kernel kills every process
// left in the session's PID namespace. Nothing of it is kept on the node.
[[noreturn]] void run_session_init(const ProcOptions &proc, int ready_fd, int life_fd) noexcept;

} // namespace sjail
