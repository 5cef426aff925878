// SPDX-License-Identifier: Apache-2.0
// What job_container/slurm_jail and namespace/slurm_jail do, whatever Slurm
// calls them: forward to chroot.so, which Slurm has already loaded into the
// same slurmd or slurmstepd through plugstack.conf, through the one table it
// exports (sjail/abi/job_container_table.h). One implementation, one
// configuration (the chroot.so line), one state layout.
//
// The two interface files (job_container_slurm_jail.cpp up to Slurm 25.05,
// namespace_slurm_jail.cpp from 25.11) only translate Slurm's signatures.
#ifndef SJAIL_PLUGIN_JOB_CONTAINER_FORWARD_HPP
#define SJAIL_PLUGIN_JOB_CONTAINER_FORWARD_HPP

#include <cstdint>
#include <sys/types.h>

namespace sjail::forward {

// Each returns SLURM_SUCCESS or SLURM_ERROR unless said otherwise; a failure
// is logged with slurm_error, naming the plugin `type` ("namespace/slurm_jail").

// chroot.so of this build is loaded in this process.
int check_loaded(const char *type);
// A child of slurmd or slurmstepd for `job`, running as `uid`, joins the
// job's tasks view; one that cannot goes to the dead end.
int join(const char *type, std::uint32_t job, uid_t uid);
// An fd of `job`'s tasks view for pam_slurm_adopt, or -1.
int join_external(const char *type, std::uint32_t job);
// `job` ended on the node: its namespaces go.
int remove(const char *type, std::uint32_t job);
// slurmd started: namespaces of jobs with nothing left on the node go.
int restore(const char *type);

} // namespace sjail::forward

#endif
