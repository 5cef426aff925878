// SPDX-License-Identifier: Apache-2.0
#include "failure_count.hpp"

#include <gtest/gtest.h>
#include <stdexcept>

namespace sjh {
namespace {

TEST(FailureCount, NextCount) {
    EXPECT_EQ(next_failure_count(0, false), 1U);
    EXPECT_EQ(next_failure_count(4, false), 5U);
    EXPECT_EQ(next_failure_count(4, true), 0U);
}

TEST(FailureCount, ParseAcceptsOnlyThisChecksCount) {
    EXPECT_EQ(parse_failure_state(R"({"check":"gpu","consecutive_failures":2})", "gpu"), 2U);
    EXPECT_THROW(parse_failure_state(R"({"check":"nccl","consecutive_failures":1})", "gpu"),
                 std::runtime_error);
    EXPECT_THROW(parse_failure_state(R"({"check":"gpu","consecutive_failures":-1})", "gpu"),
                 std::runtime_error);
    EXPECT_THROW(parse_failure_state("garbage", "gpu"), std::runtime_error);
}

TEST(FailureCount, RenderRoundTrips) {
    EXPECT_EQ(render_failure_state("nccl", 3), "{\"check\":\"nccl\",\"consecutive_failures\":3}\n");
    EXPECT_EQ(parse_failure_state(render_failure_state("nccl", 3), "nccl"), 3U);
}

} // namespace
} // namespace sjh
