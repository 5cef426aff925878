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
    }
    void TearDown() override { ::unsetenv("FAKE_NVML_FAULT"); }

    static Evaluation run_with(const char *fault) {
        ::setenv("FAKE_NVML_FAULT", fault, 1);
        const auto r = probe_gpus(SJH_FAKE_NVML, 10s);
        GpuCheckConfig c;
        c.expected_gpus = 8;
        return r.snapshot ? evaluate(*r.snapshot, {}, c) : evaluate_probe_failure(r.failure);
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
