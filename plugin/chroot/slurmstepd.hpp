// SPDX-License-Identifier: Apache-2.0
// chroot.so in slurmstepd: the step's thread into the job's views of the
// jail, the window in which its tasks are born in the job's PID namespace,
// and each task into the tasks' view, or the dead end.
#pragma once

extern "C" {
#include <slurm/spank.h>
}

namespace chroot_plugin {

// init_post_opt, main thread, before slurmstepd opens output files and
// forks tasks: decides the step (step_decision.hpp) and moves the thread
// into the job's tasks view, making the job's namespaces at its first step
// on the node. A step that may not, or cannot, enter leaves its thread in
// the dead end. The extern step's fork window opens here.
void prepare_step(spank_t sp);

// user_init, as the user, just before the tasks are forked: opens the
// window in which slurmstepd's children are born in the job's PID
// namespace. -1 when it cannot.
int open_fork_window();

// task_post_fork: the window closes at the first task, and the thread moves
// on to the job's stepd view (the node's /proc, nothing executable).
void close_fork_window();

// slurmstepd's exit: the window is closed, whatever happened before.
void end_step();

// task_init_privileged, in the task child as root before setuid and exec:
// into the tasks' view (the job's own /proc), or -1 to stop the task.
// Slurm 22.05 runs the task anyway on a positive return code. The task
// keeps its working directory by path; where Slurm cannot change into the
// step's own there, it goes to /tmp and says so, as without a jail.
int enter_task();

} // namespace chroot_plugin
