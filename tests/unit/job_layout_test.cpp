// SPDX-License-Identifier: Apache-2.0
// Pure parsing of a job's state files and of /proc/PID/stat lines.
#include "job_layout.hpp"

#include <gtest/gtest.h>

namespace {

// A real line's shape: 52 fields, the command name with a space and ')'.
std::string stat_line(const std::string &comm) {
    std::string line = "4242 (" + comm + ") S";
    for (int field = 4; field <= 52; ++field) {
        line += " " + std::to_string(field == 48   ? 140737488347000
                                     : field == 49 ? 140737488347040
                                                   : field);
    }
    return line + "\n";
}

} // namespace

TEST(JobLayout, StartTimeIsField22) {
    EXPECT_EQ(sjail::start_time_of_stat(stat_line("sleep")), 22U);
    EXPECT_EQ(sjail::start_time_of_stat(stat_line("a) b (c")), 22U);
    EXPECT_EQ(sjail::start_time_of_stat("4242 (x) S 1 2"), std::nullopt);
    EXPECT_EQ(sjail::start_time_of_stat("no parenthesis"), std::nullopt);
}

TEST(JobLayout, ArgumentAreaIsFields48And49) {
    const auto area = sjail::arg_area_of_stat(stat_line("slurmstepd: [1.0]"));
    ASSERT_TRUE(area);
    EXPECT_EQ(area->start, 140737488347000U);
    EXPECT_EQ(area->end, 140737488347040U);
    // Truncated, empty or reversed areas are refused.
    EXPECT_EQ(sjail::arg_area_of_stat("4242 (x) S 1 2 3"), std::nullopt);
    std::string reversed = stat_line("x");
    const auto at = reversed.find(" 140737488347000 ");
    reversed.replace(at, 17, " 140737488347999 ");
    EXPECT_EQ(sjail::arg_area_of_stat(reversed), std::nullopt);
}
