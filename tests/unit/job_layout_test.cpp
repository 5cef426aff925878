// SPDX-License-Identifier: Apache-2.0
// Pure parsing of a job's state files and of /proc/PID/stat lines.
#include "sjail/core/job/job_layout.hpp"

#include <gtest/gtest.h>

namespace {

// A real line's shape: 52 fields, the command name with a space and ')'.
// `state` is field 3, `exit_code` field 52.
std::string stat_line(const std::string &comm, const std::string &state = "S",
                      long exit_code = 52) {
    std::string line = "4242 (" + comm + ") ";
    line += state;
    for (int field = 4; field <= 52; ++field) {
        // Appended in place: GCC 12 at -O3 reports a false -Wrestrict
        // inside std::string for `" " + std::to_string(...)`.
        line += ' ';
        line += std::to_string(field == 48   ? 140737488347000
                               : field == 49 ? 140737488347040
                               : field == 52 ? exit_code
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

TEST(JobLayout, StepdOfCmdline) {
    using sjail::StepdOf;
    EXPECT_EQ(sjail::stepd_of_cmdline(std::string_view("slurmstepd: [42.0]\0", 19)),
              (StepdOf{42, false}));
    EXPECT_EQ(sjail::stepd_of_cmdline("slurmstepd: [42.extern]"), (StepdOf{42, true}));
    EXPECT_EQ(sjail::stepd_of_cmdline("slurmstepd: [42.batch]"), (StepdOf{42, false}));
    // The extern step of a job whose steps it manages (stepmgr, Slurm 24.05+).
    EXPECT_EQ(sjail::stepd_of_cmdline("slurmstepd: [42.extern stepmgr]"), (StepdOf{42, true}));
    EXPECT_EQ(sjail::stepd_of_cmdline("slurmstepd: [42.externx]"), (StepdOf{42, false}));
    EXPECT_EQ(sjail::stepd_of_cmdline("slurmstepd: [42.3.1]"), (StepdOf{42, false}));
    // Not a step's slurmstepd: no job, a bad job, anything else.
    EXPECT_EQ(sjail::stepd_of_cmdline("slurmstepd: spank epilog"), std::nullopt);
    EXPECT_EQ(sjail::stepd_of_cmdline("slurmstepd: [042.0]"), std::nullopt);
    EXPECT_EQ(sjail::stepd_of_cmdline("slurmstepd: [x.0]"), std::nullopt);
    EXPECT_EQ(sjail::stepd_of_cmdline("slurmstepd: [42]"), std::nullopt);
    EXPECT_EQ(sjail::stepd_of_cmdline("sleep 100"), std::nullopt);
    EXPECT_EQ(sjail::stepd_of_cmdline(""), std::nullopt);
}

TEST(JobLayout, RealUidOfStatus) {
    EXPECT_EQ(sjail::real_uid_of_status("Name:\tx\nUmask:\t0022\nUid:\t0\t5001\t5001\t5001\n"), 0U);
    EXPECT_EQ(sjail::real_uid_of_status("Name:\tx\nUid:\t5001\t0\t0\t0\n"), 5001U);
    EXPECT_EQ(sjail::real_uid_of_status("Name:\tx\nGid:\t0\n"), std::nullopt);
    EXPECT_EQ(sjail::real_uid_of_status("Name:\tUid:\t0\n"), std::nullopt);
}

TEST(JobLayout, JobWatchWithAnExternStepEndsSoonAfterNothingIsLeft) {
    using W = sjail::JobWatch;
    const auto t0 = W::Clock::time_point{} + std::chrono::hours(1);
    W watch(t0);
    // Early on the node is scanned for the extern step even while busy.
    EXPECT_TRUE(watch.wants_node_scan(t0 + std::chrono::seconds(2), true));
    watch.saw(t0 + std::chrono::seconds(2), true, true);
    EXPECT_TRUE(watch.contained());
    EXPECT_FALSE(watch.wants_node_scan(t0 + std::chrono::seconds(4), true));
    EXPECT_TRUE(watch.wants_node_scan(t0 + std::chrono::seconds(4), false));
    // Steps come and go for hours.
    watch.saw(t0 + std::chrono::hours(5), true, false);
    EXPECT_FALSE(watch.gone(t0 + std::chrono::hours(5) + W::kContainedGrace / 2));
    EXPECT_TRUE(watch.gone(t0 + std::chrono::hours(5) + W::kContainedGrace));
}

TEST(JobLayout, JobWatchWithoutAnExternStepWaitsOutPausesBetweenSteps) {
    using W = sjail::JobWatch;
    const auto t0 = W::Clock::time_point{} + std::chrono::hours(1);
    W watch(t0);
    watch.saw(t0 + std::chrono::seconds(2), true, false);
    EXPECT_FALSE(watch.wants_node_scan(t0 + W::kLookForExtern, true));
    EXPECT_FALSE(watch.contained());
    // An salloc with nothing on the node for a while keeps its namespaces.
    EXPECT_FALSE(watch.gone(t0 + std::chrono::minutes(30)));
    watch.saw(t0 + std::chrono::minutes(30), true, false);
    EXPECT_FALSE(watch.gone(t0 + std::chrono::minutes(30) + W::kUncontainedGrace / 2));
    EXPECT_TRUE(watch.gone(t0 + std::chrono::minutes(30) + W::kUncontainedGrace));
    // A job never seen at all goes too.
    EXPECT_TRUE(W(t0).gone(t0 + W::kUncontainedGrace));
}

TEST(JobLayout, AnEndedProcessAndHowItEndedFromItsStat) {
    EXPECT_FALSE(sjail::has_ended_in_stat(stat_line("sjail-job-init")));
    EXPECT_TRUE(sjail::has_ended_in_stat(stat_line("sjail-job-init", "Z", 9)));
    EXPECT_TRUE(sjail::has_ended_in_stat(stat_line("a) Z (b", "X")));
    EXPECT_FALSE(sjail::has_ended_in_stat(stat_line("a) Z (b", "R")));
    EXPECT_EQ(sjail::exit_code_of_stat(stat_line("x", "Z", 9)), 9);
    EXPECT_EQ(sjail::exit_code_of_stat(stat_line("x", "Z", 256)), 256);
    EXPECT_EQ(sjail::exit_code_of_stat("4242 (x) Z 1 2"), std::nullopt);
    EXPECT_EQ(sjail::how_it_ended(9), "killed by signal 9 (SIGKILL)");
    EXPECT_EQ(sjail::how_it_ended(256), "exited with status 1");
}
