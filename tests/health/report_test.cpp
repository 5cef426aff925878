// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

Evaluation sample() {
    Evaluation e;
    e.statuses = {{"gpu_count", std::nullopt, true},
                  {"ecc_uncorrected", 0U, true},
                  {"ecc_uncorrected", 1U, false},
                  {"temperature", 1U, false}};
    e.problems = {{"ecc_uncorrected", 1U, Severity::drain, "GPU 1 (x): 2 ECC errors"},
                  {"temperature", 1U, Severity::warn, "GPU 1 (x): temperature 92 C"}};
    return e;
}

TEST(Report, HumanLinesOnePerProblem) {
    EXPECT_EQ(render_human(sample(), {"n1", 0.25, 0}),
              "DRAIN GPU 1 (x): 2 ECC errors\nWARN GPU 1 (x): temperature 92 C\n");
    EXPECT_EQ(render_human(Evaluation{}, {"n1", 0.25, 0}),
              "OK n1: all GPU checks passed in 0.250 s\n");
}

TEST(Report, Json) {
    const auto j = render_json(sample(), std::nullopt, {"n1", 0.25, 0});
    EXPECT_EQ(j["node"], "n1");
    EXPECT_EQ(j["verdict"], "fail");
    ASSERT_EQ(j["problems"].size(), 2U);
    EXPECT_EQ(j["problems"][0]["severity"], "drain");
    EXPECT_EQ(j["problems"][0]["gpu"], 1);
    EXPECT_EQ(j["problems"][1]["severity"], "warn");
    EXPECT_EQ(j["checks"].size(), 4U);
    EXPECT_TRUE(j["checks"][0]["gpu"].is_null());
}

TEST(Report, PrometheusTextfile) {
    const auto m = render_metrics(sample(), {"n1", 0.25, 1700000000});
    EXPECT_NE(m.find("# TYPE slurm_jail_gpu_check_ok gauge\n"), std::string::npos);
    EXPECT_NE(m.find("slurm_jail_gpu_check_ok{node=\"n1\",check=\"gpu_count\",gpu=\"node\"} 1\n"),
              std::string::npos);
    EXPECT_NE(
        m.find("slurm_jail_gpu_check_ok{node=\"n1\",check=\"ecc_uncorrected\",gpu=\"0\"} 1\n"),
        std::string::npos);
    EXPECT_NE(
        m.find("slurm_jail_gpu_check_ok{node=\"n1\",check=\"ecc_uncorrected\",gpu=\"1\"} 0\n"),
        std::string::npos);
    EXPECT_NE(m.find("slurm_jail_gpu_check_drain{node=\"n1\"} 1\n"), std::string::npos);
    EXPECT_NE(m.find("slurm_jail_gpu_check_duration_seconds{node=\"n1\"} 0.250000\n"),
              std::string::npos);
    EXPECT_NE(m.find("slurm_jail_gpu_check_last_run_timestamp_seconds{node=\"n1\"} "
                     "1700000000.000\n"),
              std::string::npos);
}

} // namespace
} // namespace sjh
