// SPDX-License-Identifier: Apache-2.0
// Entering the prepared jail namespace, per step and per task.
#pragma once

#include "builder_report.hpp"
#include "config.hpp"
#include "fd.hpp"
#include "status.hpp"

#include <cstdint>
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
    Fd job_pid;       // the job's PID namespace
    Fd own_pid;       // slurmstepd's own PID namespace, to return to
    FileId jail;      // what "/" must be
    ino_t pid_ns = 0; // the job's PID namespace's inode
    bool children_in_job = false;
};

// Moves the calling thread (slurmstepd's) into the job's stepd view (making
// the job's namespaces when this is its first step on the node) and checks
// that "/" is the jail. Everything is opened before the thread leaves the
// host's view.
Status enter_job_for_step(const Config &config, std::uint32_t job, StepJail &out);

// Makes the calling thread's children be born in the job's PID namespace,
// for as long as slurmstepd forks the step's tasks, and no longer: a thread
// whose children go to another PID namespace cannot create threads (the
// kernel refuses with EINVAL), and slurmstepd creates threads after the
// tasks (I/O, monitors). Called as the user (user_init): CAP_SYS_ADMIN is
// raised from the permitted set for the one setns call.
Status start_children_in_job(StepJail &step);
void stop_children_in_job(StepJail &step) noexcept;

// Whether the caller must have been born in the job's PID namespace: tasks
// must; a job script (task epilog) or a program slurmstepd forks outside
// the task window is not, and joins the tasks' view all the same.
enum class PidCheck { Required, IfBornInTheJob };

// In a child of that thread (a task, a job script): moves it into the tasks'
// view, keeping its working directory (by path: the views are the same tree),
// and checks that "/" is the jail and where it was born.
Status enter_tasks_view(const StepJail &step, PidCheck check);

// Moves the calling thread into the mount namespace `ns_fd` (its root and cwd
// become the namespace's). Works in a multithreaded process: the thread first
// unshares its filesystem attributes (CLONE_FS), then calls setns.
Status enter_namespace(int ns_fd);

// Ok when the calling thread's "/" is the directory `jail`.
Status verify_root(const FileId &jail);

// The inode of the mount namespace the calling thread is in.
Status current_mount_namespace(ino_t &ino);

} // namespace sjail
