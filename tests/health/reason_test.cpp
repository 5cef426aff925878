// SPDX-License-Identifier: Apache-2.0
#include "reason.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

NodeState node(const std::string &state, const std::string &reason = "") {
    return {"n1", state, reason};
}

CheckOutcome fail(const std::string &cause, unsigned n = 1, unsigned after = 1) {
    return {"gpu", false, cause, n, after};
}

CheckOutcome pass() {
    return {"gpu", true, "", 0, 1};
}

TEST(Reason, PrefixRules) {
    EXPECT_EQ(make_reason("gpu", "GPU 3: 2 ECC errors"),
              "slurm-jail-health: gpu: GPU 3: 2 ECC errors");
    EXPECT_TRUE(is_our_reason("slurm-jail-health: nccl: low"));
    EXPECT_FALSE(is_our_reason("admin: bad fan"));
    EXPECT_FALSE(is_our_reason(" slurm-jail-health: gpu: x")); // must be a prefix
    EXPECT_FALSE(is_our_reason("NHC: slurm-jail-health: gpu: x"));
    EXPECT_TRUE(is_reason_of_check("slurm-jail-health: gpu: x", "gpu"));
    EXPECT_FALSE(is_reason_of_check("slurm-jail-health: nccl: x", "gpu"));
    EXPECT_FALSE(is_reason_of_check("slurm-jail-health: gpux: x", "gpu"));
}

TEST(Reason, ReasonIsOneBoundedLine) {
    const auto r = make_reason("gpu", "line1\nline2 \"quoted\" " + std::string(500, 'x'));
    EXPECT_EQ(r.find('\n'), std::string::npos);
    EXPECT_EQ(r.find('"'), std::string::npos);
    EXPECT_EQ(r.size(), kMaxReason);
    EXPECT_TRUE(r.ends_with("..."));
    EXPECT_TRUE(is_reason_of_check(r, "gpu"));
}

TEST(Reason, StateFlags) {
    EXPECT_TRUE(node("IDLE+DRAIN").drained());
    EXPECT_TRUE(node("MIXED+DRAIN").drained());
    EXPECT_TRUE(node("DOWN+DRAIN+NOT_RESPONDING").drained());
    EXPECT_TRUE(node("DOWN+DRAIN+NOT_RESPONDING").down());
    EXPECT_FALSE(node("IDLE").drained());
    EXPECT_FALSE(node("IDLE+NOT_RESPONDING").drained());
    EXPECT_TRUE(node("DOWN*").down());
}

TEST(Reason, FailureDrainsAHealthyLookingNode) {
    const auto a = decide(node("IDLE"), fail("GPU 3: lost"));
    EXPECT_EQ(a.kind, ActionKind::drain);
    EXPECT_EQ(a.reason, "slurm-jail-health: gpu: GPU 3: lost");
}

TEST(Reason, FailureNeverOverwritesAnotherReason) {
    const auto a = decide(node("IDLE+DRAIN", "admin: bad fan"), fail("GPU 3: lost"));
    EXPECT_EQ(a.kind, ActionKind::none);
    EXPECT_NE(a.why.find("drained by someone else"), std::string::npos);
    EXPECT_EQ(decide(node("IDLE+DRAIN", "slurm-jail-health: gpu: old"), fail("new")).kind,
              ActionKind::none);
}

TEST(Reason, ConsecutiveFailuresBeforeDraining) {
    EXPECT_EQ(decide(node("IDLE"), fail("x", 1, 3)).kind, ActionKind::none);
    EXPECT_EQ(decide(node("IDLE"), fail("x", 2, 3)).kind, ActionKind::none);
    EXPECT_EQ(decide(node("IDLE"), fail("x", 3, 3)).kind, ActionKind::drain);
    EXPECT_EQ(decide(node("IDLE"), fail("x", 4, 3)).kind, ActionKind::drain);
}

TEST(Reason, PassResumesOnlyWhatThisCheckDrained) {
    EXPECT_EQ(decide(node("IDLE+DRAIN", "slurm-jail-health: gpu: GPU 3: lost"), pass()).kind,
              ActionKind::resume);
    EXPECT_EQ(decide(node("IDLE+DRAIN", "admin: bad fan"), pass()).kind, ActionKind::none);
    EXPECT_EQ(decide(node("IDLE+DRAIN", "slurm-jail-health: nccl: low busbw"), pass()).kind,
              ActionKind::none);
    EXPECT_EQ(decide(node("IDLE+DRAIN", ""), pass()).kind, ActionKind::none);
    EXPECT_EQ(decide(node("IDLE"), pass()).kind, ActionKind::none);
    EXPECT_EQ(decide(node("DOWN*"), pass()).kind, ActionKind::none);
}

} // namespace
} // namespace sjh
