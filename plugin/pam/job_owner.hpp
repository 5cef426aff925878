// SPDX-License-Identifier: Apache-2.0
// Asking slurmctld who a job belongs to. The job id a session names comes
// from its cgroup or from SLURM_JOB_ID in the PAM environment, which other
// PAM modules (pam_env with user_readenv) could set; Slurm's own answer is
// what lets a session into a job.
//
// libslurm never runs in the module's caller (sshd): a child process loads
// it (with RTLD_GLOBAL, as its own plugins need), asks, reports one line and
// ends. Whatever libslurm does there (a symbol its plugins cannot resolve,
// fatal() and exit, a crash, a thread, a hang) ends that child only, and the
// session is refused.
#pragma once

#include "sjail/core/status.hpp"

#include <cstdint>
#include <sys/types.h>

namespace sjail {

// Ok when `job` is running and belongs to `uid` (slurm_load_job, through
// the node's slurm.conf and munge). Refused when slurmctld says otherwise,
// or when no clear answer came within the time limit.
Status check_job_owner(std::uint32_t job, uid_t uid);

} // namespace sjail
