// SPDX-License-Identifier: Apache-2.0
// chroot.so in slurmd, and at a job's end on the node: deleting what
// crashed jobs left, the node watch, building the node's jail namespace
// early, and deleting a job's namespaces.
#pragma once

extern "C" {
#include <slurm/spank.h>
}

#include <cstdint>

namespace chroot_plugin {

// slurmd's init: deletes the namespaces of jobs with nothing left on the
// node, starts the node watch (node_watch.hpp) and builds the node's jail
// namespace in the background, so slurmd's start is not delayed.
void start_in_slurmd();

// slurmd's exit: stops the node watch and drops the node's namespace.
void stop_in_slurmd();

// After slurmd or slurmstepd was killed: the namespaces of jobs that have
// no process left on the node go.
void delete_stale_jobs();

// The job ended on this node: its namespaces go, and the node's record of
// the jail generations it holds is brought up to date. -1 when the
// namespaces could not go.
int delete_job(std::uint32_t job);

// The node's record of the jail generations it holds, brought up to date
// (sys/node/generation_holds.hpp); a failure is logged.
void record_generation_holds();

// SPANK's job epilog (at the job's end, in a process slurmd starts for it,
// "slurmstepd spank epilog", without a slurm_spank_init): deletes the job's
// namespaces with the settings that come with this call.
int delete_job_at_epilog(spank_t sp, int ac, char **av);

} // namespace chroot_plugin
