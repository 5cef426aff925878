// SPDX-License-Identifier: Apache-2.0
// Entering the prepared jail namespace, per step and per task.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/file_id.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"

#include <cstdint>
#include <optional>
#include <sys/types.h>

namespace sjail {

// Moves the calling thread into the node's jail namespace (building it when
// needed) and checks that "/" there is the jail. When the kept namespace
// turns out not to be the jail, its stamp is dropped so the next step
// rebuilds it, and a failure is returned: the caller must leave this view.
Status enter_node_jail(const Config &config);

// What a step keeps once slurmstepd's thread is in the job's view.
struct StepJail {
    Fd tasks;         // the tasks' view, entered by each task (and job scripts)
    Fd stepd;         // slurmstepd's own view once the tasks are forked
    Fd job_pid;       // the job's PID namespace
    Fd job_ipc;       // the job's IPC namespace (not valid for a job made before it)
    Fd own_pid;       // slurmstepd's own PID namespace, to return to
    FileId jail;      // what "/" must be
    ino_t pid_ns = 0; // the job's PID namespace's inode
    bool children_in_job = false;
    bool tasks_forked = false; // the thread moved on to the stepd view
};

// Moves the calling thread (slurmstepd's) into the job's tasks view (making
// the job's namespaces when this is its first step on the node) and checks
// that "/" is the jail. Everything is opened before the thread leaves the
// host's view. There Slurm does what it does as the user before the tasks
// run: it opens the -i/-o/-e files, changes into the working directory and
// runs other plugins' user_init, all with only the job's processes in /proc.
Status enter_job_for_step(const Config &config, std::uint32_t job, StepJail &out,
                          std::optional<uid_t> user = std::nullopt);

// Once the tasks are forked: moves the thread on to the job's stepd view,
// whose /proc is the node's (Slurm reads its tasks' host PIDs there) and
// where nothing can be executed, so that a script Slurm forks later for the
// step (a task epilog) runs only after it joined the tasks' view (through
// job_container/slurm_jail). Idempotent. On failure the thread stays in the
// tasks' view, which is safe.
Status move_on_to_stepd_view(StepJail &step);

// Makes the calling thread's children be born in the job's PID namespace,
// for as long as slurmstepd forks the step's tasks, and no longer: a thread
// whose children go to another PID namespace cannot create threads (the
// kernel refuses with EINVAL), and slurmstepd creates threads after the
// tasks (I/O, monitors). Called as the user (user_init): CAP_SYS_ADMIN is
// raised from the permitted set for the one setns call.
Status start_children_in_job(StepJail &step);
void stop_children_in_job(StepJail &step) noexcept;

// Whether the caller must have been born in the job's PID namespace: tasks
// must; a job script (task epilog) that slurmstepd forks outside the task
// window is born again there (see be_born_in_job).
enum class PidCheck { Required, RebirthIfNeeded };

// In a child of that thread (a task, a job script): moves it into the tasks'
// view and the job's IPC namespace, keeping its working directory (by path:
// the views are the same tree), and checks that "/" is the jail and where it
// was born.
Status enter_tasks_view(const StepJail &step, PidCheck check);

// In a single-threaded child that was born outside the job's PID namespace:
// forks a keeper in the job's PID namespace, which forks the script there;
// the script returns Ok and goes on in the caller's place. The caller stays
// behind as a waiter that leads a process group of its own (the one Slurm
// kills when the script overruns) and exits with the script's status; it
// never returns. When the script exits, or Slurm's kill ends the waiter, the
// keeper kills the script and its process group (as Slurm's kill does
// without a jail) and ends. Whatever else the script leaves behind is in the
// job and ends with it.
Status be_born_in_job(const StepJail &step);

// Moves the calling thread into the job's IPC namespace `ipc_fd`, when the
// job has one (a job made by an earlier version has none: not valid).
Status enter_job_ipc(const Fd &ipc_fd);

// Moves the calling thread into the mount namespace `ns_fd` (its root and cwd
// become the namespace's). Works in a multithreaded process: the thread first
// unshares its filesystem attributes (CLONE_FS), then calls setns.
Status enter_namespace(int ns_fd);

// Ok when the calling thread's "/" is the directory `jail`.
Status verify_root(const FileId &jail);

// The inode of the mount namespace the calling thread is in.
Status current_mount_namespace(ino_t &ino);

} // namespace sjail
