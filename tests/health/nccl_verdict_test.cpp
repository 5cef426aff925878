// SPDX-License-Identifier: Apache-2.0
#include "nccl_verdict.hpp"
#include "test_util.hpp"

namespace sjh {
namespace {

using test::nccl_fixture;

NcclVerdict judge_fixture(const std::string &name, const std::string &threshold, unsigned gpus,
                          NcclRun run = {}) {
    return judge_nccl(parse_nccl_output(nccl_fixture(name)), run, parse_threshold(threshold), gpus);
}

TEST(NcclVerdict, HealthyFixturesPass) {
    const auto v2 = judge_fixture("02_healthy_2gpu_nvlink_a40.txt", "A40x2=40", 2);
    EXPECT_TRUE(v2.pass) << v2.cause;
    EXPECT_DOUBLE_EQ(*v2.measured_busbw, 47.49);
    const auto v1 =
        judge_fixture("01_healthy_2node_mpirun_tagged_aws_batch.txt", "H100x16=400", 16);
    EXPECT_TRUE(v1.pass) << v1.cause;
}

TEST(NcclVerdict, BlipRowDoesNotFailAHealthyNode) {
    // 04 has one in-place row at 4 GiB down to 164 GB/s; only 8 GiB is judged.
    const auto v = judge_fixture("04_healthy_4gpu_nvswitch_a100.txt", "A100x4=200", 4);
    EXPECT_TRUE(v.pass) << v.cause;
    EXPECT_DOUBLE_EQ(*v.measured_busbw, 234.74);
}

TEST(NcclVerdict, LowBandwidthFixturesFailWithMeasuredAndExpected) {
    const auto v = judge_fixture("05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt", "A100x4=200", 4);
    EXPECT_FALSE(v.pass);
    EXPECT_EQ(v.cause, "busbw 5.20 GB/s at 8 GiB < 200 GB/s expected for A100x4");
    const auto v3 = judge_fixture("03_low_bw_4gpu_p2p_disabled_sys_a40.txt", "A40x4=20", 4);
    EXPECT_FALSE(v3.pass);
    EXPECT_EQ(v3.cause, "busbw 1.35 GB/s at 8 GiB < 20 GB/s expected for A40x4");
    const auto v6 =
        judge_fixture("06_full_header_v2.18_mpirun_tagged_socket_lowbw.txt", "5090x2=20", 2);
    EXPECT_EQ(v6.cause, "busbw 2.31 GB/s at 128 MiB < 20 GB/s expected for 5090x2");
}

TEST(NcclVerdict, NeverJudgesOnTheSweepMean) {
    // 01's mean (156.7) is far under 400 but the 16 GiB rows (483) are fine.
    const auto out =
        parse_nccl_output(nccl_fixture("01_healthy_2node_mpirun_tagged_aws_batch.txt"));
    ASSERT_LT(*out.avg_busbw, 400);
    EXPECT_TRUE(judge_nccl(out, {}, parse_threshold("H100x16=400"), 16).pass);
    // And a high threshold fails on the largest-size value, not the mean.
    const auto v = judge_nccl(out, {}, parse_threshold("H100x16=490"), 16);
    EXPECT_EQ(v.cause, "busbw 483.35 GB/s at 16 GiB < 490 GB/s expected for H100x16");
}

TEST(NcclVerdict, FailureModes) {
    const auto healthy = nccl_fixture("02_healthy_2gpu_nvlink_a40.txt");
    const auto t = parse_threshold("A40x2=40");
    NcclRun timeout;
    timeout.timed_out = true;
    timeout.timeout_s = 5;
    EXPECT_EQ(judge_nccl(parse_nccl_output(healthy), timeout, t, 2).cause,
              "all_reduce_perf did not finish within 5 s");
    NcclRun exit7;
    exit7.exit_code = 7;
    EXPECT_EQ(judge_nccl(parse_nccl_output(healthy), exit7, t, 2).cause,
              "all_reduce_perf exited with code 7 (wrong results or bandwidth under "
              "NCCL_TESTS_MIN_BW)");
    NcclRun exit3;
    exit3.exit_code = 3;
    const auto failed = parse_nccl_output("# header\n node1: Test NCCL failure common.cu:1 'x'\n");
    EXPECT_EQ(judge_nccl(failed, exit3, t, 2).cause,
              "all_reduce_perf exited with code 3 (NCCL error): node1: Test NCCL failure "
              "common.cu:1 'x'");
    EXPECT_EQ(judge_nccl(parse_nccl_output("# nothing\n"), {}, t, 2).cause,
              "all_reduce_perf printed no data rows");
    std::string wrong = healthy;
    wrong.replace(wrong.find("47.49      0"), 12, "47.49     12");
    EXPECT_EQ(judge_nccl(parse_nccl_output(wrong), {}, t, 2).cause,
              "all_reduce_perf found 12 wrong values (#wrong)");
    std::string oob = healthy;
    oob.replace(oob.find("0 OK"), 4, "3 FAILED");
    EXPECT_EQ(judge_nccl(parse_nccl_output(oob), {}, t, 2).cause,
              "all_reduce_perf: out of bounds values 3 FAILED");
}

TEST(NcclVerdict, SingleGpuIsNotJudgedOnBandwidth) {
    const std::string one =
        "  8589934592    2147483648     float     sum      -1   9000.1  954.45    0.00      0   "
        "9000.2  954.44    0.00      0\n# Out of bounds values : 0 OK\n";
    const auto v = judge_nccl(parse_nccl_output(one), {}, std::nullopt, 1);
    EXPECT_TRUE(v.pass);
    ASSERT_FALSE(v.notes.empty());
    EXPECT_NE(v.notes.back().find("one GPU"), std::string::npos);
}

TEST(NcclVerdict, RealH200SingleGpuPassesOnCorrectnessAlone) {
    // No threshold exists for one GPU: busbw is 0 by definition, so only the
    // exit code, failure lines, #wrong and the out-of-bounds footer count.
    const auto out = parse_nccl_output(nccl_fixture("10_h200x1_sweep_v2.19.6_real.txt"));
    EXPECT_FALSE(find_threshold(default_thresholds(), "NVIDIA H200", 1).has_value());
    const auto v = judge_nccl(out, {}, std::nullopt, 1);
    EXPECT_TRUE(v.pass) << v.cause;
    EXPECT_DOUBLE_EQ(*v.measured_busbw, 0.0);
    EXPECT_EQ(v.measured_size, 8589934592ULL);
    EXPECT_EQ(v.notes, (std::vector<std::string>{
                           "one GPU: bus bandwidth is 0 by definition and is not judged"}));
    NcclRun nccl_error;
    nccl_error.exit_code = 3;
    EXPECT_EQ(judge_nccl(out, nccl_error, std::nullopt, 1).cause,
              "all_reduce_perf exited with code 3 (NCCL error)");
}

TEST(NcclVerdict, ThresholdParsing) {
    const auto t = parse_threshold("H100x8=400");
    EXPECT_EQ(t.model, "H100");
    EXPECT_EQ(t.gpus, 8U);
    EXPECT_DOUBLE_EQ(t.min_busbw, 400);
    EXPECT_EQ(parse_threshold("A100-SXM4-80GBx8=212.5").model, "A100-SXM4-80GB");
    for (const char *bad : {"H100x8", "H100=400", "x8=400", "H100x0=400", "H100x8=-1",
                            "H100x8=fast", "H100xeight=400"}) {
        EXPECT_THROW(parse_threshold(bad), std::invalid_argument) << bad;
    }
    try {
        parse_threshold("H100x8");
    } catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string(e.what()).find("for example H100x8=400"), std::string::npos);
    }
}

TEST(NcclVerdict, ThresholdLookup) {
    const auto table = merge_thresholds(
        default_thresholds(), {parse_threshold("A100-80GBx8=230"), parse_threshold("H100x8=420")});
    EXPECT_EQ(find_threshold(table, "NVIDIA H100 80GB HBM3", 8)->min_busbw, 420);
    EXPECT_EQ(find_threshold(table, "NVIDIA A100-SXM4-80GB", 8)->min_busbw, 228);
    EXPECT_EQ(find_threshold(table, "NVIDIA A100 80GB PCIe", 8)->min_busbw, 228);
    EXPECT_EQ(find_threshold(table, "NVIDIA A100-80GB", 8)->min_busbw, 230);
    EXPECT_FALSE(find_threshold(table, "NVIDIA H100 80GB HBM3", 4).has_value());
    EXPECT_FALSE(find_threshold(table, "Tesla V100", 8).has_value());
}

} // namespace
} // namespace sjh
