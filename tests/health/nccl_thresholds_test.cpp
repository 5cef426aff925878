// SPDX-License-Identifier: Apache-2.0
#include "nccl_thresholds.hpp"
#include "nccl_verdict.hpp"
#include "test_util.hpp"

#include <fmt/format.h>
#include <set>
#include <utility>

namespace sjh {
namespace {

using test::nccl_fixture;

struct Gpu {
    const char *nvml_name; // as NVML / nvidia-smi print it
    unsigned gpus;         // per node (host)
    const char *model;     // the table entry it must pick
};

// Every current GPU, by the name NVML gives it, and its GPUs per host.
const Gpu kCurrentGpus[] = {
    {"NVIDIA H100 80GB HBM3", 8, "H100"}, {"NVIDIA H200", 8, "H200"},
    {"NVIDIA B200", 8, "B200"},           {"NVIDIA B300 SXM6 AC", 8, "B300"},
    {"NVIDIA GB200", 4, "GB200"},         {"NVIDIA GB300", 4, "GB300"},
    {"NVIDIA A100-SXM4-80GB", 8, "A100"},
};

TEST(NcclThresholds, EveryCurrentGpuHasAnIntraNodeThreshold) {
    const auto table = default_thresholds();
    for (const auto &g : kCurrentGpus) {
        const auto t = find_threshold(table, g.nvml_name, g.gpus);
        ASSERT_TRUE(t.has_value()) << g.nvml_name;
        EXPECT_EQ(t->model, g.model) << g.nvml_name; // GB200 is not taken for B200
        EXPECT_EQ(t->nodes, 1U) << g.nvml_name;
        EXPECT_GT(t->min_busbw, 0) << g.nvml_name;
    }
}

TEST(NcclThresholds, EveryCurrentGpuHasAMultiNodeThreshold) {
    const auto table = default_thresholds();
    for (const auto &g : kCurrentGpus) {
        for (const unsigned nodes : {2U, 3U, 18U}) {
            const auto t = find_threshold(table, g.nvml_name, g.gpus, nodes);
            ASSERT_TRUE(t.has_value()) << g.nvml_name << " on " << nodes << " nodes";
            EXPECT_EQ(t->model, g.model) << g.nvml_name;
            EXPECT_EQ(t->nodes, 2U) << g.nvml_name;
            // Across nodes the network, not NVLink, bounds busbw.
            EXPECT_LT(t->min_busbw, find_threshold(table, g.nvml_name, g.gpus)->min_busbw)
                << g.nvml_name;
        }
    }
}

TEST(NcclThresholds, DefaultTableHasOneRowPerKeyAndRoundTrips) {
    std::set<std::string> keys;
    for (const auto &t : default_thresholds()) {
        EXPECT_TRUE(keys.insert(t.key()).second) << "duplicate " << t.key();
        const auto back = parse_threshold(t.spec());
        EXPECT_EQ(back.model, t.model);
        EXPECT_EQ(back.gpus, t.gpus);
        EXPECT_EQ(back.nodes, t.nodes);
        EXPECT_DOUBLE_EQ(back.min_busbw, t.min_busbw);
    }
}

TEST(NcclThresholds, ParsesTheNodeCountCompatibly) {
    const auto one = parse_threshold("H100x8=400");
    EXPECT_EQ(one.model, "H100");
    EXPECT_EQ(one.gpus, 8U);
    EXPECT_EQ(one.nodes, 1U);
    EXPECT_EQ(one.spec(), "H100x8=400");
    const auto two = parse_threshold("H100x8x2=250");
    EXPECT_EQ(two.model, "H100");
    EXPECT_EQ(two.gpus, 8U);
    EXPECT_EQ(two.nodes, 2U);
    EXPECT_DOUBLE_EQ(two.min_busbw, 250);
    EXPECT_EQ(two.spec(), "H100x8x2=250");
    const auto named = parse_threshold("A100-SXM4-80GBx8x4=150.5");
    EXPECT_EQ(named.model, "A100-SXM4-80GB");
    EXPECT_EQ(named.nodes, 4U);
    EXPECT_EQ(parse_threshold("H100x8x1=460").spec(), "H100x8=460");
    EXPECT_EQ(parse_threshold("H100x16=400").key(), "H100x16"); // 16 GPUs, one node
}

TEST(NcclThresholds, BadOverridesSayWhatIsWrongAndHowToWriteIt) {
    const std::pair<const char *, const char *> cases[] = {
        {"H100x8x2", "no '='"},
        {"H100x8x0=250", "node count '0' is not a positive integer"},
        {"H100x8xtwo=250", "node count 'two' is not a positive integer"},
        {"H100x0x2=250", "GPU count '0' is not a positive integer"},
        {"H100x8x2=-5", "bandwidth '-5' is not a positive number of GB/s"},
        {"H100x8x2=", "bandwidth '' is not a positive number of GB/s"},
        {"x8=400", "the key must be MODELxGPUS or MODELxGPUSxNODES"},
        {"H100x=400", "the key must be MODELxGPUS or MODELxGPUSxNODES"},
    };
    for (const auto &[spec, why] : cases) {
        try {
            parse_threshold(spec);
            ADD_FAILURE() << spec << " was accepted";
        } catch (const std::invalid_argument &e) {
            const std::string what = e.what();
            EXPECT_NE(what.find(fmt::format("bad threshold '{}': {}", spec, why)),
                      std::string::npos)
                << what;
            EXPECT_NE(what.find("write MODELxGPUS=GBPS for one node or MODELxGPUSxNODES=GBPS "
                                "across nodes, for example H100x8=400 or H100x8x2=250"),
                      std::string::npos)
                << what;
        }
    }
}

TEST(NcclThresholds, OverridesWin) {
    const auto table = merge_thresholds(
        default_thresholds(), {parse_threshold("H100x8=420"), parse_threshold("b200x8x2=300"),
                               parse_threshold("GB300x4=700"), parse_threshold("V100x8=120")});
    EXPECT_EQ(find_threshold(table, "NVIDIA H100 80GB HBM3", 8)->min_busbw, 420);
    EXPECT_EQ(find_threshold(table, "NVIDIA H100 80GB HBM3", 8, 2)->min_busbw, 250);
    // Same model (case-insensitively), GPUs and nodes: replaced, not duplicated.
    EXPECT_EQ(find_threshold(table, "NVIDIA B200", 8, 2)->min_busbw, 300);
    EXPECT_EQ(find_threshold(table, "NVIDIA B200", 8)->min_busbw, 675);
    EXPECT_EQ(find_threshold(table, "NVIDIA GB300", 4)->min_busbw, 700);
    EXPECT_EQ(find_threshold(table, "Tesla V100-SXM2-32GB", 8)->min_busbw, 120);
    EXPECT_EQ(table.size(), default_thresholds().size() + 1);
    // A longer, more specific model beats the built-in row.
    const auto specific =
        merge_thresholds(default_thresholds(), {parse_threshold("H100 80GB HBM3x8x2=380")});
    EXPECT_EQ(find_threshold(specific, "NVIDIA H100 80GB HBM3", 8, 4)->min_busbw, 380);
    EXPECT_EQ(find_threshold(specific, "NVIDIA H100 NVL", 8, 4)->min_busbw, 250);
}

TEST(NcclThresholds, MultiNodeLookupTakesTheLargestCoveredNodeCount) {
    const auto table = merge_thresholds(
        default_thresholds(), {parse_threshold("H100x8x4=200"), parse_threshold("H100x8x16=150")});
    const auto at = [&table](unsigned nodes) {
        return find_threshold(table, "NVIDIA H100 80GB HBM3", 8, nodes)->min_busbw;
    };
    EXPECT_EQ(at(1), 460);
    EXPECT_EQ(at(2), 250);
    EXPECT_EQ(at(3), 250);
    EXPECT_EQ(at(4), 200);
    EXPECT_EQ(at(15), 200);
    EXPECT_EQ(at(16), 150);
    EXPECT_EQ(at(64), 150);
    // A one-node row never judges a multi-node run, nor the other way round.
    EXPECT_FALSE(find_threshold(table, "NVIDIA A40", 2, 2).has_value());
    const auto only_multi = merge_thresholds({}, {parse_threshold("V100x8x2=40")});
    EXPECT_FALSE(find_threshold(only_multi, "Tesla V100", 8).has_value());
    EXPECT_EQ(find_threshold(only_multi, "Tesla V100", 8, 2)->min_busbw, 40);
}

TEST(NcclThresholds, RealFixturesJudgedAgainstTheDefaultTable) {
    const auto table = default_thresholds();
    // 01: two AWS p5 nodes (8x H100 each), 483.35 GB/s at 16 GiB: passes the
    // two-node row, and would pass the one-node row too.
    const auto aws =
        parse_nccl_output(nccl_fixture("01_healthy_2node_mpirun_tagged_aws_batch.txt"));
    const auto two_nodes = find_threshold(table, "NVIDIA H100 80GB HBM3", 8, 2);
    const auto v1 = judge_nccl(aws, {}, two_nodes, 16);
    EXPECT_TRUE(v1.pass) << v1.cause;
    EXPECT_EQ(v1.notes.back(), "busbw 483.35 GB/s at 16 GiB >= 250 GB/s expected for H100x8x2");
    EXPECT_TRUE(judge_nccl(aws, {}, find_threshold(table, "NVIDIA H100 80GB HBM3", 8), 16).pass);
    // 10: one H200, no threshold and none needed.
    const auto h200 = parse_nccl_output(nccl_fixture("10_h200x1_sweep_v2.19.6_real.txt"));
    EXPECT_FALSE(find_threshold(table, "NVIDIA H200", 1).has_value());
    EXPECT_TRUE(judge_nccl(h200, {}, std::nullopt, 1).pass);
    // 04/05: A100 x4 on NVSwitch, healthy and with P2P disabled.
    const auto a100 = find_threshold(table, "NVIDIA A100-SXM4-80GB", 4);
    const auto v4 = judge_nccl(parse_nccl_output(nccl_fixture("04_healthy_4gpu_nvswitch_a100.txt")),
                               {}, a100, 4);
    EXPECT_TRUE(v4.pass) << v4.cause;
    const auto v5 =
        judge_nccl(parse_nccl_output(nccl_fixture("05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt")),
                   {}, a100, 4);
    EXPECT_EQ(v5.cause, "busbw 5.20 GB/s at 8 GiB < 200 GB/s expected for A100x4");
    // 02: A40 pair on an NVLink bridge.
    EXPECT_TRUE(judge_nccl(parse_nccl_output(nccl_fixture("02_healthy_2gpu_nvlink_a40.txt")), {},
                           find_threshold(table, "NVIDIA A40", 2), 2)
                    .pass);
}

} // namespace
} // namespace sjh
