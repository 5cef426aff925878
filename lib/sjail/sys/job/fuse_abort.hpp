// SPDX-License-Identifier: Apache-2.0
// Freeing a job that cannot die. A process waiting for a FUSE request that
// its daemon read but never answers sleeps uninterruptibly: SIGKILL does
// not end it, slurmstepd cannot end the step, and Slurm drains the node
// ("Kill task failed"). Only aborting the connection (fusectl's
// connections/N/abort, root's alone) ends the wait. The job's init does it
// for the FUSE filesystems the job mounted: those in the mount tables of
// its processes (in any namespace below the job's, a container's user
// namespace too) that the node's own mount namespace does not have. A
// FUSE filesystem of the node bound into the jail (the jail itself on
// GlusterFS, a bind= of the admin's) is never touched.
#pragma once

#include <set>
#include <sys/types.h>

namespace sjail {

// The processes of the job's PID namespace (`job_proc`, its /proc) that
// were sent SIGKILL and have not died of it.
std::set<pid_t> stuck_dying_processes(int job_proc) noexcept;

// Aborts the connections of the FUSE filesystems the job mounted, in a
// child (which enters `node_mnt`, the node's own mount namespace, to tell
// the node's FUSE mounts apart and reach fusectl). Returns how many it
// aborted, or -1 when the child failed.
int abort_job_fuse(int job_proc, int node_mnt) noexcept;

} // namespace sjail
