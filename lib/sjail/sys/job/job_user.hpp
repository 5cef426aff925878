// SPDX-License-Identifier: Apache-2.0
// Whose a job is, kept beside its namespaces (STATE/jobs/JOB/user): what
// is cleaned when a user's last job on the node ends (gpu_mps_shm=) asks.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <sys/types.h>

namespace sjail {

// Records `uid` as the user of `job`, whose state directory exists (its
// steps enter it); nothing when it is recorded already or cannot be.
void record_job_user(const std::string &state_dir, std::uint32_t job, uid_t uid);

// The users of the jobs that have state on the node; nothing when one of
// them has no user recorded (made before its first step, or by an older
// chroot.so): then nobody's files may be taken for a gone user's.
std::optional<std::set<uid_t>> users_of_jobs(const std::string &state_dir);

} // namespace sjail
