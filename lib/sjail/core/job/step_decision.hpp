// SPDX-License-Identifier: Apache-2.0
// What a job step does about the jail, decided in one place from what
// slurmstepd really sees. Pure: no system calls.
#pragma once

#include "sjail/core/status.hpp"

#include <string>

namespace sjail {

enum class StepAction {
    Enter,    // enter the jail; any failure from here on is fatal for the step
    NodeRoot, // --no-jail by a user the admin allowed: run on the node's root
    Refuse,   // do not run: leave the host view for the dead end, report `reason`
};

// Every step of a job enters the job, the extern step too (pam_slurm_adopt
// puts SSH sessions into it).
struct StepFacts {
    Status config;                  // the plugstack.conf line as parsed
    bool no_jail_requested = false; // --no-jail, from srun or from the job environment
    bool opt_out_allowed = false;   // the user is listed in allow_opt_out=
    unsigned uid = 0;
};

struct StepDecision {
    StepAction action = StepAction::Refuse;
    std::string reason; // why (Refuse) or what happens (NodeRoot)
};

StepDecision decide_step(const StepFacts &facts);

// The message for --no-jail by a user the admin did not allow, the same
// whether the request came from srun's option or from the environment.
std::string opt_out_refusal(unsigned uid);

} // namespace sjail
