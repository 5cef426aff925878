// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/job/step_decision.hpp"

#include <gtest/gtest.h>

using sjail::decide_step;
using sjail::StepAction;
using sjail::StepFacts;

namespace {

StepFacts ordinary_step() {
    StepFacts facts;
    facts.uid = 5001;
    return facts;
}

} // namespace

TEST(StepDecision, AnOrdinaryStepEntersTheJail) {
    EXPECT_EQ(decide_step(ordinary_step()).action, StepAction::Enter);
}

TEST(StepDecision, ABadConfigRefusesWithItsMessage) {
    StepFacts facts = ordinary_step();
    facts.config = sjail::Status::failure("plugstack.conf: unknown setting 'jial'");
    const auto d = decide_step(facts);
    EXPECT_EQ(d.action, StepAction::Refuse);
    EXPECT_EQ(d.reason, "plugstack.conf: unknown setting 'jial'");
}

// One decision whether the request came from srun's option or from
// _SLURM_SPANK_OPTION_chroot_no_jail in the job's environment.
TEST(StepDecision, OptOutByAUserNotAllowedIsRefused) {
    StepFacts facts = ordinary_step();
    facts.no_jail_requested = true;
    const auto d = decide_step(facts);
    EXPECT_EQ(d.action, StepAction::Refuse);
    EXPECT_EQ(d.reason, sjail::opt_out_refusal(5001));
    EXPECT_NE(d.reason.find("--no-jail is not allowed for uid 5001"), std::string::npos);
    EXPECT_NE(d.reason.find("_SLURM_SPANK_OPTION_chroot_no_jail"), std::string::npos);
    EXPECT_NE(d.reason.find("allow_opt_out="), std::string::npos);
}

TEST(StepDecision, OptOutByAnAllowedUserRunsOnTheNodeRoot) {
    StepFacts facts = ordinary_step();
    facts.no_jail_requested = true;
    facts.opt_out_allowed = true;
    EXPECT_EQ(decide_step(facts).action, StepAction::NodeRoot);
}

TEST(StepDecision, AllowedButNotRequestedStillEnters) {
    StepFacts facts = ordinary_step();
    facts.opt_out_allowed = true;
    EXPECT_EQ(decide_step(facts).action, StepAction::Enter);
}

TEST(StepDecision, BadConfigWinsOverAnAllowedOptOut) {
    StepFacts facts = ordinary_step();
    facts.no_jail_requested = true;
    facts.opt_out_allowed = true;
    facts.config = sjail::Status::failure("plugstack.conf: jail= is missing");
    EXPECT_EQ(decide_step(facts).action, StepAction::Refuse);
}
