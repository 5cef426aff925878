// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/job/step_decision.hpp"

namespace sjail {

StepDecision decide_step(const StepFacts &facts) {
    if (!facts.config.ok()) {
        return {StepAction::Refuse, facts.config.message()};
    }
    if (facts.no_jail_requested) {
        if (!facts.opt_out_allowed) {
            return {StepAction::Refuse, opt_out_refusal(facts.uid)};
        }
        return {StepAction::NodeRoot,
                "--no-jail by uid " + std::to_string(facts.uid) + ": running on the node's root"};
    }
    return {StepAction::Enter, ""};
}

std::string opt_out_refusal(unsigned uid) {
    return "--no-jail is not allowed for uid " + std::to_string(uid) +
           " (asked for by option or by _SLURM_SPANK_OPTION_chroot_no_jail in the environment); "
           "an admin must list the user in allow_opt_out= in plugstack.conf";
}

} // namespace sjail
