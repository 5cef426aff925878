// SPDX-License-Identifier: Apache-2.0
#include "nccl_output.hpp"
#include "test_util.hpp"

#include <set>

namespace sjh {
namespace {

using test::nccl_fixture;

struct Expected {
    std::size_t rows;
    std::uint64_t largest;
    double busbw_at_largest;
    double avg;
};

// The values printed in each real output in ../shared/fixtures/nccl/.
const std::map<std::string, Expected> &expected() {
    static const std::map<std::string, Expected> e = {
        {"01_healthy_2node_mpirun_tagged_aws_batch.txt", {32, 17179869184ULL, 483.35, 156.742}},
        {"02_healthy_2gpu_nvlink_a40.txt", {4, 8589934592ULL, 47.49, 47.4509}},
        {"03_low_bw_4gpu_p2p_disabled_sys_a40.txt", {4, 8589934592ULL, 1.35, 1.40216}},
        {"04_healthy_4gpu_nvswitch_a100.txt", {4, 8589934592ULL, 234.74, 222.066}},
        {"05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt", {4, 8589934592ULL, 5.20, 5.19883}},
        {"06_full_header_v2.18_mpirun_tagged_socket_lowbw.txt", {8, 134217728ULL, 2.31, 1.57614}},
        // One GPU: busbw is 0 by definition, in every row and on average.
        {"10_h200x1_sweep_v2.19.6_real.txt", {31, 8589934592ULL, 0.0, 0.0}},
    };
    return e;
}

TEST(NcclOutput, EveryFixtureHasExpectationsAndParses) {
    std::set<std::string> seen;
    for (const auto &entry : std::filesystem::directory_iterator(test::fixtures() / "nccl")) {
        const auto name = entry.path().filename().string();
        if (name == "SOURCES.txt") {
            continue;
        }
        seen.insert(name);
        ASSERT_TRUE(expected().contains(name)) << "new fixture without expectations: " << name;
        const auto &e = expected().at(name);
        const auto out = parse_nccl_output(nccl_fixture(name));
        EXPECT_EQ(out.rows.size(), e.rows) << name;
        ASSERT_FALSE(out.rows.empty()) << name;
        EXPECT_EQ(largest_size_rows(out).front().size_bytes, e.largest) << name;
        EXPECT_DOUBLE_EQ(*busbw_at_largest_size(out), e.busbw_at_largest) << name;
        ASSERT_TRUE(out.avg_busbw.has_value()) << name;
        EXPECT_DOUBLE_EQ(*out.avg_busbw, e.avg) << name;
        EXPECT_EQ(out.out_of_bounds, 0U) << name;
        EXPECT_EQ(out.out_of_bounds_ok, true) << name;
        EXPECT_EQ(total_wrong(out), 0.0) << name;
        EXPECT_TRUE(out.failures.empty()) << name;
    }
    EXPECT_EQ(seen.size(), expected().size()) << "a fixture is missing from the fixtures folder";
}

TEST(NcclOutput, MpirunTaggedRowsKeepEveryColumn) {
    const auto out =
        parse_nccl_output(nccl_fixture("01_healthy_2node_mpirun_tagged_aws_batch.txt"));
    const auto &first = out.rows.front();
    EXPECT_EQ(first.size_bytes, 8U);
    EXPECT_EQ(first.count, 2U);
    EXPECT_EQ(first.type, "float");
    EXPECT_EQ(first.redop, "sum");
    EXPECT_DOUBLE_EQ(first.oop_time_us, 12.90);
    EXPECT_DOUBLE_EQ(first.ip_time_us, 12.87);
    const auto &last = out.rows.back();
    EXPECT_DOUBLE_EQ(last.oop_algbw, 276.03);
    EXPECT_DOUBLE_EQ(last.oop_busbw, 483.05);
    EXPECT_DOUBLE_EQ(last.ip_algbw, 276.20);
    EXPECT_EQ(last.oop_wrong, 0.0);
    EXPECT_FALSE(out.version.has_value()); // old nccl-tests print no version line
}

TEST(NcclOutput, BlipRowInTheMiddleIsParsedButNotTheLargest) {
    const auto out = parse_nccl_output(nccl_fixture("04_healthy_4gpu_nvswitch_a100.txt"));
    EXPECT_DOUBLE_EQ(out.rows[2].ip_busbw, 164.13);
    EXPECT_DOUBLE_EQ(out.rows[2].oop_busbw, 232.81);
}

TEST(NcclOutput, ModernHeaderWithStderrNoise) {
    const auto out =
        parse_nccl_output(nccl_fixture("06_full_header_v2.18_mpirun_tagged_socket_lowbw.txt"));
    EXPECT_EQ(out.version, "2.18.0");
    EXPECT_DOUBLE_EQ(out.rows.front().oop_time_us, 4366.46);
    EXPECT_DOUBLE_EQ(out.rows.back().oop_busbw, 2.30);
    EXPECT_DOUBLE_EQ(out.rows.back().ip_busbw, 2.31);
}

TEST(NcclOutput, RealH200SingleGpuSweep) {
    // Recorded on one H200 with nccl-tests 2.19.6 (-b 8 -e 8G -f 2 -g 1).
    const auto out = parse_nccl_output(nccl_fixture("10_h200x1_sweep_v2.19.6_real.txt"));
    EXPECT_EQ(out.version, "2.19.6");
    const auto &first = out.rows.front();
    EXPECT_EQ(first.size_bytes, 8U);
    EXPECT_EQ(first.count, 2U);
    EXPECT_DOUBLE_EQ(first.oop_time_us, 6.46);
    EXPECT_DOUBLE_EQ(first.ip_algbw, 0.02);
    const auto &last = out.rows.back();
    EXPECT_EQ(last.count, 2147483648ULL);
    EXPECT_DOUBLE_EQ(last.oop_time_us, 3998.12);
    EXPECT_DOUBLE_EQ(last.oop_algbw, 2148.5);
    EXPECT_DOUBLE_EQ(last.oop_busbw, 0.0);
    EXPECT_DOUBLE_EQ(last.ip_time_us, 1.10);
    // In-place is a no-op for one rank, so its algbw is meaningless (%g form).
    EXPECT_DOUBLE_EQ(last.ip_algbw, 8e+06);
    EXPECT_DOUBLE_EQ(last.ip_busbw, 0.0);
    EXPECT_EQ(last.oop_wrong, 0.0);
    EXPECT_EQ(last.ip_wrong, 0.0);
    EXPECT_DOUBLE_EQ(out.rows[22].ip_algbw, 114286); // 32 MiB
}

TEST(NcclOutput, FixturesWithoutTrailingFooterStillHaveTheirFooterValues) {
    // 02..05 end right after "# Avg bus bandwidth" (no closing "#" line).
    const auto out =
        parse_nccl_output(nccl_fixture("05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt"));
    EXPECT_DOUBLE_EQ(*out.avg_busbw, 5.19883);
}

// The cases below are written in the format the fixtures show, for the
// variants no saved real output has (see shared/NOTES.md, "NCCL all_reduce_perf").
constexpr const char *kHeader =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n";

TEST(NcclOutput, WrongAsNotAvailable) {
    const std::string text =
        std::string(kHeader) +
        "  8589934592    2147483648     float     sum      -1   54894  156.48  234.72    N/A   "
        "54890  156.49  234.74    N/A\n"
        "# Out of bounds values : 0 OK\n";
    const auto out = parse_nccl_output(text);
    ASSERT_EQ(out.rows.size(), 1U);
    EXPECT_FALSE(out.rows[0].oop_wrong.has_value());
    EXPECT_FALSE(out.rows[0].ip_wrong.has_value());
    EXPECT_EQ(total_wrong(out), 0.0);
}

TEST(NcclOutput, WrongInExponentForm) {
    const std::string text =
        std::string(kHeader) +
        "  8589934592    2147483648     float     sum      -1   54894  156.48  234.72 "
        "1.04858e+06   54890  156.49  234.74      0\n"
        "# Out of bounds values : 1 FAILED\n";
    const auto out = parse_nccl_output(text);
    ASSERT_EQ(out.rows.size(), 1U);
    EXPECT_DOUBLE_EQ(*out.rows[0].oop_wrong, 1.04858e+06);
    EXPECT_DOUBLE_EQ(total_wrong(out), 1.04858e+06);
    EXPECT_EQ(out.out_of_bounds, 1U);
    EXPECT_EQ(out.out_of_bounds_ok, false);
}

TEST(NcclOutput, NcclFailureWithNoRowsAndNoFooter) {
    const std::string text =
        "[1,0]<stdout>:# nccl-tests version 2.18.0 nccl-headers=22907 nccl-library=22907\n"
        "[1,0]<stdout>:" +
        std::string(kHeader) +
        "[1,0]<stdout>:node1: Test NCCL failure common.cu:1005 'unhandled system error'\n";
    const auto out = parse_nccl_output(text);
    EXPECT_TRUE(out.rows.empty());
    ASSERT_EQ(out.failures.size(), 1U);
    EXPECT_NE(out.failures[0].find("Test NCCL failure common.cu:1005"), std::string::npos);
    EXPECT_FALSE(out.out_of_bounds_ok.has_value());
    EXPECT_FALSE(out.avg_busbw.has_value());
    EXPECT_FALSE(busbw_at_largest_size(out).has_value());
}

TEST(NcclOutput, SingleGpuHasZeroBusbw) {
    const std::string text =
        std::string(kHeader) +
        "  8589934592    2147483648     float     sum      -1   9000.1  954.45    0.00      0   "
        "9000.2  954.44    0.00      0\n"
        "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0 \n";
    const auto out = parse_nccl_output(text);
    ASSERT_EQ(out.rows.size(), 1U);
    EXPECT_DOUBLE_EQ(*busbw_at_largest_size(out), 0.0);
    EXPECT_DOUBLE_EQ(*out.avg_busbw, 0.0);
}

TEST(NcclOutput, TagStripping) {
    EXPECT_EQ(strip_mpirun_tag("[1,0]<stdout>:# x").first, "# x");
    EXPECT_EQ(strip_mpirun_tag("[1,12]<stderr>:noise").second, "stderr");
    EXPECT_EQ(strip_mpirun_tag("[  123.4] not a tag").second, "");
    EXPECT_EQ(strip_mpirun_tag("plain").first, "plain");
}

TEST(NcclOutput, HumanSize) {
    EXPECT_EQ(human_size(8589934592ULL), "8 GiB");
    EXPECT_EQ(human_size(134217728ULL), "128 MiB");
    EXPECT_EQ(human_size(8), "8 B");
    EXPECT_EQ(human_size(1536), "1536 B");
}

} // namespace
} // namespace sjh
