// SPDX-License-Identifier: Apache-2.0
// The system layer of pam_slurm_jail: everything it opens, checks and enters.
//
// plan_session opens and checks everything from the node's own view (the
// account phase stops there, so a refusal reaches the SSH client as a
// banner); enter_session then moves the calling process (sshd's monitor,
// which forks the session's processes next) into the jail.
#pragma once

#include "session_plan.hpp"
#include "sjail/core/config.hpp"
#include "sjail/core/proc_options.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/job/job_namespace.hpp"
#include "sjail/sys/node/node_namespace.hpp"

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
    ProcOptions proc; // for a private session's /proc
};

// Reads the chroot.so line of `args.plugstack` (a root-owned file), finds
// where the session belongs (the node, the job pam_slurm_adopt adopted it
// into, or a PID namespace of its own), opens those namespaces (building the
// node's if needed, with the jail's checks) and finds the user in the jail's
// /etc/passwd.
Status plan_session(const ModuleArgs &args, const SessionUser &user,
                    const JobOwnerCheck &check_owner, SessionPlan &out);

// Moves the calling (single-threaded, root) process into the plan's view
// and checks that "/" is the jail. For a job, its children are then born in
// the job's PID namespace; for a private session, in a new PID namespace
// whose init (job_init.hpp) this process forks now, and which ends with
// this process and its children (no state is kept). Then changes to the
// user's home in the jail. `notice` gets a line for the user when the home
// is not usable.
Status enter_session(SessionPlan &plan, std::string &notice);

} // namespace sjail
