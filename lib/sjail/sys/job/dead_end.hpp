// SPDX-License-Identifier: Apache-2.0
// Where slurmstepd's thread goes when a step may not run: out of every view
// of the node's files, so that nothing Slurm does next for the step (task
// prolog and epilog scripts, output-file opens, a path no one thought of)
// finds anything of the host.
//
// The dead end is an empty, read-only tmpfs in a mount namespace private to
// the calling thread, which becomes the thread's root. Everything in it is
// mounted noexec, so nothing can be executed there. Into it go only what
// slurmstepd itself needs to end the step and report why:
//   the munge socket directory   to authenticate its messages to srun and slurmd
//   the slurmd spool directory    when root-owned and closed to group and
//                                 others: to remove a batch step's script
//   /dev/null                     for the tasks' standard input
//   /sys/fs/cgroup                for cgroup plugins to clean up the step
//   /home                         when it is a root-owned directory closed to
//                                 group and others (the recommended node setup
//                                 binds the jail's /home there): a failed batch
//                                 step's error still lands in the output file
//   /etc/hosts, /etc/resolv.conf, /etc/nsswitch.conf (read-only)
//                                 to resolve the controller's name
// Never /proc: through /proc/PID/root of a process outside the jail, a user's
// --task-epilog could reach the host.
//
// Allocation-free and noexcept: it runs on failure paths, after bad_alloc too.
#pragma once

namespace sjail {

// Returns true when the calling thread's root is now the dead end. When it
// cannot be built, the thread's root is left where it was and false is
// returned; the caller must then stop the process. `munge_dir` and
// `spool_dir` are absolute paths, or null for none.
bool enter_dead_end(const char *munge_dir, const char *spool_dir) noexcept;

} // namespace sjail
