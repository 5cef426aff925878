// SPDX-License-Identifier: Apache-2.0
#include "nccl_metrics.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

NcclMetrics sample() {
    NcclMetrics m;
    m.node = "gpu-1";
    m.model = "NVIDIA H100 80GB HBM3";
    m.gpus = 8;
    m.nodes = 1;
    m.pass = false;
    m.busbw_gbps = 312.5;
    m.threshold_gbps = 400;
    m.duration_s = 61.25;
    m.timestamp_s = 1764000000.5;
    return m;
}

TEST(NcclMetrics, EveryFigureWithTheRunsLabels) {
    const auto text = render_nccl_metrics(sample());
    const std::string labels = R"({node="gpu-1",model="NVIDIA H100 80GB HBM3",gpus="8",nodes="1"})";
    EXPECT_NE(text.find("slurm_jail_nccl_check_ok" + labels + " 0\n"), std::string::npos) << text;
    EXPECT_NE(text.find("slurm_jail_nccl_check_busbw_gbps" + labels + " 312.5\n"),
              std::string::npos);
    EXPECT_NE(text.find("slurm_jail_nccl_check_threshold_gbps" + labels + " 400\n"),
              std::string::npos);
    EXPECT_NE(text.find("slurm_jail_nccl_check_duration_seconds" + labels + " 61.250\n"),
              std::string::npos);
    EXPECT_NE(text.find("slurm_jail_nccl_check_last_run_timestamp_seconds" + labels +
                        " 1764000000.500\n"),
              std::string::npos);
    EXPECT_NE(text.find("# TYPE slurm_jail_nccl_check_ok gauge\n"), std::string::npos);
}

TEST(NcclMetrics, UnmeasuredFiguresAreLeftOut) {
    auto m = sample();
    m.pass = true;
    m.busbw_gbps.reset();
    m.threshold_gbps.reset();
    m.model = "a \"quoted\" name";
    const auto text = render_nccl_metrics(m);
    EXPECT_EQ(text.find("busbw_gbps"), std::string::npos);
    EXPECT_EQ(text.find("threshold_gbps"), std::string::npos);
    EXPECT_NE(text.find(R"(model="a \"quoted\" name")"), std::string::npos);
    EXPECT_NE(text.find("slurm_jail_nccl_check_ok{"), std::string::npos);
    EXPECT_NE(text.find("} 1\n"), std::string::npos);
}

} // namespace
} // namespace sjh
