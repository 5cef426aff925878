// SPDX-License-Identifier: Apache-2.0
// The system layer of pam_slurm_jail: everything it opens, checks and enters.
//
// plan_session opens and checks everything from the node's own view (the
// account phase stops there, so a refusal reaches the SSH client as a
// banner); enter_session then moves the calling process (sshd's monitor,
// which forks the session's processes next) into the jail.
#pragma once

#include "config.hpp"
#include "job_namespace.hpp"
#include "node_namespace.hpp"
#include "session_plan.hpp"
#include "status.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <sys/types.h>

namespace sjail {

struct SessionUser {
    std::string name;
    uid_t uid = 0;
    const char *pam_env_job = nullptr; // SLURM_JOB_ID of the PAM environment, if set
};

// Asks Slurm whether `job` is running and belongs to `uid` (job_owner.hpp).
using JobOwnerCheck = std::function<Status(std::uint32_t job, uid_t uid)>;

struct SessionPlan {
    Config config;
    SessionDecision decision;
    PasswdEntry entry; // the user in the jail's /etc/passwd
    NodeNamespace node;
    JobNamespace job;
};

// Reads the chroot.so line of `plugstack` (a root-owned file), finds where
// the session belongs (the node, or the job pam_slurm_adopt adopted it
// into), opens those namespaces (building the node's if needed, with the
// jail's checks) and finds the user in the jail's /etc/passwd.
Status plan_session(const std::string &plugstack, const SessionUser &user,
                    const JobOwnerCheck &check_owner, SessionPlan &out);

// Moves the calling (single-threaded, root) process into the plan's view
// (and, for a job, makes its children be born in the job's PID namespace),
// checks that "/" is the jail and changes to the user's home there.
// `notice` gets a line for the user when the home is not usable.
Status enter_session(SessionPlan &plan, std::string &notice);

} // namespace sjail
