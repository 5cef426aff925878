// SPDX-License-Identifier: Apache-2.0
// The real probe (fork + dlopen) against the fake NVML built by the tests.
#include "gpu_checks.hpp"
#include "nvml_probe.hpp"
#include "test_util.hpp"

#include <cstdlib>

namespace sjh {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class NvmlProbe : public ::testing::Test {
  protected:
    void SetUp() override {
        ::setenv("FAKE_NVML_CSV",
                 (test::fixtures() / "nvidia-smi" / "02_h100_sxm_query-gpu_csv_idle.txt").c_str(),
                 1);
        ::unsetenv("FAKE_NVML_FAULT");
        ::unsetenv("FAKE_NVML_GPUS");
        ::unsetenv("FAKE_NVML_QUERY");
        ::unsetenv("FAKE_NVML_FAULT_GPU");
    }
    void TearDown() override {
        ::unsetenv("FAKE_NVML_FAULT");
        ::unsetenv("FAKE_NVML_QUERY");
        ::unsetenv("FAKE_NVML_FAULT_GPU");
    }

    static Evaluation run_with(const char *fault, unsigned expected_gpus = 8) {
        ::setenv("FAKE_NVML_FAULT", fault, 1);
        const auto r = probe_gpus(SJH_FAKE_NVML, 10s);
        GpuCheckConfig c;
        c.expected_gpus = expected_gpus;
        return r.snapshot ? evaluate(*r.snapshot, {}, c) : evaluate_probe_failure(r.failure);
    }

    // The recorded H200 VM: `nvidia-smi -q` (07) for the values NVML gives.
    static void use_h200() {
        ::setenv("FAKE_NVML_QUERY",
                 (test::fixtures() / "nvidia-smi" / "07_h200_nvidia-smi-q_idle.txt").c_str(), 1);
        ::setenv("FAKE_NVML_FAULT_GPU", "0", 1);
    }

    // GPU 0's row of the plain `nvidia-smi` table recorded on the same machine (08).
    static std::string h200_table_row() {
        const auto table =
            test::read_file(test::fixtures() / "nvidia-smi" / "08_h200_nvidia-smi_idle.txt");
        const auto at = table.find("|   0  ");
        return at == std::string::npos ? "" : table.substr(at, table.find('\n', at) - at);
    }
};

TEST_F(NvmlProbe, HealthyEightH100) {
    const auto r = probe_gpus(SJH_FAKE_NVML, 10s);
    ASSERT_TRUE(r.snapshot.has_value()) << r.failure;
    ASSERT_EQ(r.snapshot->gpus.size(), 8U);
    const auto &g = r.snapshot->gpus[3];
    // Values from the real capture 02_h100_sxm_query-gpu_csv_idle.txt.
    EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(g.temperature_c, 41U);
    EXPECT_EQ(g.pcie_gen, 5U);
    EXPECT_EQ(g.pcie_width_max, 16U);
    EXPECT_EQ(g.ecc_uncorrected_volatile, 0U);
    EXPECT_EQ(g.throttle_reasons, 1U);                 // GPU idle
    EXPECT_FALSE(g.retired_pages_pending.has_value()); // [N/A] on H100
    EXPECT_EQ(g.remap_pending, false);
    EXPECT_EQ(g.nvlinks_total, 18U);
    EXPECT_EQ(g.bus_id, "00000000:48:00.0");
    GpuCheckConfig c;
    c.expected_gpus = 8;
    const auto e = evaluate(*r.snapshot, {}, c);
    EXPECT_TRUE(e.problems.empty());
}

TEST_F(NvmlProbe, OneH200AsRecorded) {
    use_h200();
    const auto r = probe_gpus(SJH_FAKE_NVML, 10s);
    ASSERT_TRUE(r.snapshot.has_value()) << r.failure;
    EXPECT_EQ(r.snapshot->count, 1U); // "Attached GPUs : 1"
    ASSERT_EQ(r.snapshot->gpus.size(), 1U);
    const auto &g = r.snapshot->gpus[0];
    // Values from the real capture 07_h200_nvidia-smi-q_idle.txt.
    EXPECT_EQ(g.name, "NVIDIA H200");
    EXPECT_EQ(g.bus_id, "00000000:00:06.0");
    EXPECT_EQ(g.temperature_c, 38U);
    EXPECT_EQ(g.pcie_gen, 5U);
    EXPECT_EQ(g.pcie_gen_max, 5U);
    EXPECT_EQ(g.pcie_width, 16U);
    EXPECT_EQ(g.pcie_width_max, 16U);
    EXPECT_EQ(g.ecc_uncorrected_volatile, 0U);
    EXPECT_EQ(g.throttle_reasons, kThrottleIdle);      // "Idle : Active", nothing else
    EXPECT_FALSE(g.retired_pages_pending.has_value()); // N/A on Hopper
    EXPECT_EQ(g.remap_pending, false);
    EXPECT_EQ(g.remap_failed, false);
    EXPECT_FALSE(g.nvlinks_total.has_value()); // the VM exposes no NVLink
    EXPECT_TRUE(g.errors.empty());
    // The same GPU in the plain table (08): name, bus id, volatile uncorrectable ECC 0.
    const auto row = h200_table_row();
    EXPECT_NE(row.find(g.name), std::string::npos) << row;
    EXPECT_NE(row.find(g.bus_id + " Off |                    0 |"), std::string::npos) << row;

    GpuCheckConfig one;
    one.expected_gpus = 1;
    const auto e = evaluate(*r.snapshot, {}, one);
    EXPECT_TRUE(e.problems.empty());
    EXPECT_EQ(e.statuses.size(), 2U + 7U); // no nvlink status without NVLinks
    GpuCheckConfig eight;
    eight.expected_gpus = 8;
    const auto short_of_eight = evaluate(*r.snapshot, {}, eight);
    ASSERT_EQ(short_of_eight.problems.size(), 1U);
    EXPECT_EQ(short_of_eight.problems[0].check, "gpu_count");
    EXPECT_EQ(short_of_eight.problems[0].message, "1 GPUs visible, 8 expected");
}

TEST_F(NvmlProbe, EachFailureModeOnTheH200) {
    use_h200();
    const struct {
        const char *fault;
        const char *message;
    } cases[] = {
        {"lost",
         "GPU 0: nvmlDeviceGetPciInfo_v3 says: GPU is lost (GPU lost or fallen off the bus)"},
        {"ecc", "GPU 0 (00000000:00:06.0): 2 volatile uncorrectable ECC errors"},
        {"retired_pages",
         "GPU 0 (00000000:00:06.0): retired pages pending (reset the GPU or reboot)"},
        {"remap_pending", "GPU 0 (00000000:00:06.0): row remap pending (reset the GPU or reboot)"},
        {"remap_failed", "GPU 0 (00000000:00:06.0): row remapping failed (replace the GPU)"},
        {"pcie_width", "GPU 0 (00000000:00:06.0): PCIe link width x8 below its maximum x16"},
        {"pcie_gen", "GPU 0 (00000000:00:06.0): PCIe link generation 3 below its maximum 5"},
        {"missing_gpu", "0 GPUs visible, 1 expected"},
    };
    for (const auto &c : cases) {
        const auto e = run_with(c.fault, 1);
        ASSERT_FALSE(e.problems.empty()) << c.fault;
        EXPECT_EQ(e.problems.front().message, c.message) << c.fault;
        EXPECT_TRUE(e.must_drain()) << c.fault;
    }
    // No NVLink on this GPU, so there is no link to find inactive.
    EXPECT_TRUE(run_with("nvlink", 1).problems.empty());
}

TEST_F(NvmlProbe, EachFailureModeIsSeenThroughDlopen) {
    const struct {
        const char *fault;
        const char *check;
        bool drain;
    } cases[] = {
        {"lost", "gpu_lost", true},
        {"ecc", "ecc_uncorrected", true},
        {"retired_pages", "retired_pages_pending", true},
        {"remap_pending", "row_remap", true},
        {"remap_failed", "row_remap", true},
        {"pcie_width", "pcie_link", true},
        {"pcie_gen", "pcie_link", true},
        {"pcie_gen_idle", "pcie_link", false},
        {"nvlink", "nvlink", true},
        {"hot", "temperature", false},
        {"throttle", "clock_throttle", false},
        {"missing_gpu", "gpu_count", true},
        {"init_fail", "nvml", true},
    };
    for (const auto &c : cases) {
        const auto e = run_with(c.fault);
        ASSERT_FALSE(e.problems.empty()) << c.fault;
        EXPECT_EQ(e.problems.front().check, c.check) << c.fault;
        EXPECT_EQ(e.must_drain(), c.drain) << c.fault;
    }
    const auto hot = run_with("hot");
    ASSERT_EQ(hot.problems.size(), 2U); // temperature and HW thermal slowdown
    EXPECT_EQ(hot.problems[1].check, "clock_throttle");
    EXPECT_EQ(run_with("init_fail").problems.front().message,
              "nvmlInit_v2 failed: Driver Not Loaded (9)");
}

TEST_F(NvmlProbe, HungCallEndsWithinTheBudgetAndNamesTheCall) {
    ::setenv("FAKE_NVML_FAULT", "hang", 1);
    const auto start = Clock::now();
    const auto r = probe_gpus(SJH_FAKE_NVML, 1500ms);
    const auto took = Clock::now() - start;
    EXPECT_FALSE(r.snapshot.has_value());
    EXPECT_EQ(r.failure, "NVML call nvmlDeviceGetTotalEccErrors on GPU 3 did not return within "
                         "1.5 s (hung GPU or driver)");
    EXPECT_LT(took, 3s); // budget plus process teardown, far from "forever"
}

TEST_F(NvmlProbe, MissingLibraryIsAClearFailure) {
    const auto r = probe_gpus("/nonexistent/libnvidia-ml.so.1", 5s);
    EXPECT_FALSE(r.snapshot.has_value());
    EXPECT_NE(r.failure.find("cannot load NVML library '/nonexistent/libnvidia-ml.so.1'"),
              std::string::npos);
    EXPECT_NE(r.failure.find("--nvml-library"), std::string::npos);
}

} // namespace
} // namespace sjh
