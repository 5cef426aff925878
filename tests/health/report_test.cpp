// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <fmt/format.h>
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

std::vector<IbPortReading> ib_ports() {
    IbPortReading ndr{"mlx5_0/1",   "4: ACTIVE", "5: LinkUp", "400 Gb/sec (4X NDR)",
                      "InfiniBand", 3U,          12U};
    IbPortReading roce_down{"mlx5_2/1", "1: DOWN",    "3: Disabled", "",
                            "Ethernet", std::nullopt, std::nullopt};
    return {ndr, roce_down};
}

TEST(Report, PrometheusIbPortLines) {
    const auto m = render_ib_port_metrics(ib_ports(), {"n1", 0.25, 0});
    EXPECT_NE(m.find("# TYPE slurm_jail_gpu_check_ib_port_up gauge\n"), std::string::npos);
    const auto ndr = R"({node="n1",port="mlx5_0/1",link_layer="InfiniBand"})";
    const auto roce = R"({node="n1",port="mlx5_2/1",link_layer="Ethernet"})";
    for (const auto &line : {fmt::format("slurm_jail_gpu_check_ib_port_up{} 1\n", ndr),
                             fmt::format("slurm_jail_gpu_check_ib_port_rate_gbps{} 400\n", ndr),
                             fmt::format("slurm_jail_gpu_check_ib_port_link_downed{} 3\n", ndr),
                             fmt::format("slurm_jail_gpu_check_ib_port_symbol_error{} 12\n", ndr),
                             fmt::format("slurm_jail_gpu_check_ib_port_up{} 0\n", roce)}) {
        EXPECT_NE(m.find(line), std::string::npos) << line << "in:\n" << m;
    }
    // Values sysfs did not give are left out, not made up.
    EXPECT_EQ(m.find(fmt::format("slurm_jail_gpu_check_ib_port_rate_gbps{}", roce)),
              std::string::npos);
    EXPECT_EQ(m.find(fmt::format("slurm_jail_gpu_check_ib_port_link_downed{}", roce)),
              std::string::npos);
    EXPECT_EQ(render_ib_port_metrics({}, {"n1", 0.25, 0}), "");
}

TEST(Report, JsonIbPorts) {
    const auto j = render_ib_ports_json(ib_ports());
    ASSERT_EQ(j.size(), 2U);
    EXPECT_EQ(j[0]["port"], "mlx5_0/1");
    EXPECT_EQ(j[0]["up"], true);
    EXPECT_EQ(j[0]["rate_gbps"], 400.0);
    EXPECT_EQ(j[0]["link_downed"], 3);
    EXPECT_EQ(j[1]["up"], false);
    EXPECT_TRUE(j[1]["rate_gbps"].is_null());
    EXPECT_TRUE(j[1]["symbol_error"].is_null());
}

} // namespace
} // namespace sjh
