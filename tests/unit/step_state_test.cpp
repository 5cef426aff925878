// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/job/step_state.hpp"

#include <gtest/gtest.h>

using sjail::StepPhase;
using sjail::StepState;
using sjail::TaskVerdict;

TEST(StepState, AStepNotYetPreparedRefusesItsTasks) {
    const StepState state;
    EXPECT_EQ(state.phase(), StepPhase::Undecided);
    EXPECT_EQ(state.for_task(), TaskVerdict::Refuse);
    EXPECT_NE(state.task_refusal("StepId=7.0").find("never prepared"), std::string::npos);
}

TEST(StepState, AnEnteredStepMovesItsTasksIntoTheJail) {
    StepState state;
    state.entered();
    EXPECT_TRUE(state.in_jail());
    EXPECT_EQ(state.for_task(), TaskVerdict::EnterJail);
}

TEST(StepState, AnAllowedOptOutRunsWhereItIs) {
    StepState state;
    state.run_on_node_root();
    EXPECT_EQ(state.phase(), StepPhase::OnNodeRoot);
    EXPECT_EQ(state.for_task(), TaskVerdict::RunWhereItIs);
    EXPECT_FALSE(state.in_jail());
}

TEST(StepState, AFailureAfterEntryRefusesAndSaysWhy) {
    StepState state;
    state.entered();
    state.refuse("the jail's /usr is writable by uid 1000");
    EXPECT_FALSE(state.in_jail());
    EXPECT_EQ(state.for_task(), TaskVerdict::Refuse);
    EXPECT_EQ(state.task_refusal("StepId=7.0"),
              "StepId=7.0: task not started, jail entry failed: the jail's /usr is writable by "
              "uid 1000");
}

TEST(StepState, ARefusedStepNeverRunsAgain) {
    StepState state;
    state.refuse("first cause");
    state.entered();
    state.run_on_node_root();
    state.refuse("second cause");
    EXPECT_EQ(state.phase(), StepPhase::Refused);
    EXPECT_EQ(state.for_task(), TaskVerdict::Refuse);
    EXPECT_EQ(state.refusal(), "first cause");
}

TEST(StepState, AStepOnTheNodeRootIsNotMovedIntoTheJailLater) {
    StepState state;
    state.run_on_node_root();
    state.entered();
    state.refuse("late");
    EXPECT_EQ(state.for_task(), TaskVerdict::RunWhereItIs);
}

TEST(StepState, RunningOutOfMemoryRefusesFromEveryState) {
    for (int start = 0; start < 3; ++start) {
        StepState state;
        if (start == 1) {
            state.entered();
        } else if (start == 2) {
            state.refuse("cause");
        }
        state.ran_out_of_memory();
        EXPECT_EQ(state.phase(), StepPhase::OutOfMemory);
        EXPECT_EQ(state.for_task(), TaskVerdict::Refuse);
        EXPECT_NE(state.task_refusal("s").find("out of memory"), std::string::npos);
        state.entered();
        EXPECT_EQ(state.for_task(), TaskVerdict::Refuse);
    }
}
