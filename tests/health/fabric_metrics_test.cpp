// SPDX-License-Identifier: Apache-2.0
#include "fabric_metrics.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace sjh {
namespace {

// Four H200 nodes, node3 slow: the run across all fails, the ring pairs
// blame node3 (the e2e test's "one slow node").
FabricMetrics one_slow_node() {
    FabricMetrics m;
    m.model = "H200";
    m.gpus = 1;
    m.nodes = {"node1", "node2", "node3", "node4"};
    m.groups = {{{"node1", "node2", "node3", "node4"}, false, 5.0, "slow"},
                {{"node1", "node2"}, true, 40.0, ""},
                {{"node3", "node4"}, false, 5.0, "slow"},
                {{"node2", "node3"}, false, std::nullopt, "exited with code 1"},
                {{"node4", "node1"}, true, 40.0, ""}};
    m.threshold_gbps = {{2U, 30.0}, {4U, 30.0}};
    m.blamed = "node3";
    m.duration_s = 12.5;
    m.timestamp_s = 1764000000.25;
    return m;
}

bool has(const std::string &text, const std::string &line) {
    return text.find(line + "\n") != std::string::npos;
}

TEST(FabricMetrics, TheRunEveryGroupAndTheBlamedNode) {
    const auto text = render_fabric_metrics(one_slow_node());
    const std::string run = R"({model="H200",gpus="1",nodes="4"})";
    EXPECT_TRUE(has(text, "slurm_jail_nccl_fabric_ok" + run + " 0")) << text;
    EXPECT_TRUE(has(text, "slurm_jail_nccl_fabric_duration_seconds" + run + " 12.500"));
    EXPECT_TRUE(
        has(text, "slurm_jail_nccl_fabric_last_run_timestamp_seconds" + run + " 1764000000.250"));
    EXPECT_TRUE(has(
        text,
        R"(slurm_jail_nccl_fabric_group_ok{group="node1+node2+node3+node4",size="4",model="H200",gpus="1"} 0)"));
    EXPECT_TRUE(has(
        text,
        R"(slurm_jail_nccl_fabric_group_busbw_gbps{group="node1+node2+node3+node4",size="4",model="H200",gpus="1"} 5)"));
    EXPECT_TRUE(has(
        text,
        R"(slurm_jail_nccl_fabric_group_ok{group="node1+node2",size="2",model="H200",gpus="1"} 1)"));
    EXPECT_TRUE(has(
        text,
        R"(slurm_jail_nccl_fabric_group_busbw_gbps{group="node4+node1",size="2",model="H200",gpus="1"} 40)"));
    // A group that printed no bandwidth has a verdict and no busbw.
    EXPECT_TRUE(has(
        text,
        R"(slurm_jail_nccl_fabric_group_ok{group="node2+node3",size="2",model="H200",gpus="1"} 0)"));
    EXPECT_EQ(text.find(R"(busbw_gbps{group="node2+node3")"), std::string::npos) << text;
    EXPECT_TRUE(
        has(text, R"(slurm_jail_nccl_fabric_threshold_gbps{size="2",model="H200",gpus="1"} 30)"));
    EXPECT_TRUE(
        has(text, R"(slurm_jail_nccl_fabric_threshold_gbps{size="4",model="H200",gpus="1"} 30)"));
    EXPECT_TRUE(has(text, R"(slurm_jail_nccl_fabric_node_blamed{node="node3"} 1)"));
    for (const char *node : {"node1", "node2", "node4"}) {
        EXPECT_TRUE(
            has(text, fmt::format(R"(slurm_jail_nccl_fabric_node_blamed{{node="{}"}} 0)", node)));
    }
    // Each gauge's HELP and TYPE once.
    EXPECT_EQ(text.find("# TYPE slurm_jail_nccl_fabric_group_ok gauge\n"),
              text.rfind("# TYPE slurm_jail_nccl_fabric_group_ok gauge\n"));
}

TEST(FabricMetrics, APassingRunBlamesNobodyAndHasOneGroup) {
    auto m = one_slow_node();
    m.groups = {{m.nodes, true, 40.0, ""}};
    m.blamed.reset();
    m.model = "a \"quoted\" name";
    const auto text = render_fabric_metrics(m);
    EXPECT_NE(
        text.find(R"(slurm_jail_nccl_fabric_ok{model="a \"quoted\" name",gpus="1",nodes="4"} 1)"),
        std::string::npos)
        << text;
    EXPECT_EQ(text.find(R"(group_ok{group="node1+node2",)"), std::string::npos) << text;
    EXPECT_EQ(text.find("node_blamed{node=\"node3\"} 1"), std::string::npos);
    EXPECT_NE(text.find("node_blamed{node=\"node3\"} 0"), std::string::npos);
}

} // namespace
} // namespace sjh
