// SPDX-License-Identifier: Apache-2.0
#include "gpu_checks.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

// One H100 as the idle capture in shared/fixtures/nvidia-smi/02 shows it.
GpuSnapshot h100(unsigned i) {
    GpuSnapshot g;
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.bus_id = "00000000:" + std::string(i < 10 ? "1" : "2") + std::to_string(i % 10) + ":00.0";
    g.ecc_uncorrected_volatile = 0;
    g.remap_pending = false;
    g.remap_failed = false;
    g.pcie_gen = 5;
    g.pcie_gen_max = 5;
    g.pcie_width = 16;
    g.pcie_width_max = 16;
    g.nvlinks_total = 18;
    g.temperature_c = 41;
    g.throttle_reasons = kThrottleIdle;
    return g;
}

NodeSnapshot healthy_node() {
    NodeSnapshot n;
    n.count = 8;
    for (unsigned i = 0; i < 8; ++i) {
        n.gpus.push_back(h100(i));
    }
    return n;
}

GpuCheckConfig cfg8() {
    GpuCheckConfig c;
    c.expected_gpus = 8;
    return c;
}

const Problem *only_problem(const Evaluation &e) {
    EXPECT_EQ(e.problems.size(), 1U);
    return e.problems.empty() ? nullptr : &e.problems.front();
}

TEST(GpuChecks, HealthyNodePassesWithAStatusPerCheckPerGpu) {
    const auto e = evaluate(healthy_node(), {}, cfg8());
    EXPECT_TRUE(e.problems.empty());
    EXPECT_FALSE(e.must_drain());
    // nvml + gpu_count + per GPU: gpu_lost ecc row_remap pcie nvlink temp throttle xid
    EXPECT_EQ(e.statuses.size(), 2U + 8U * 8U);
    for (const auto &s : e.statuses) {
        EXPECT_TRUE(s.ok) << s.check;
    }
}

TEST(GpuChecks, MissingGpuDrains) {
    auto n = healthy_node();
    n.gpus.pop_back();
    const auto e = evaluate(n, {}, cfg8());
    const auto *p = only_problem(e);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->check, "gpu_count");
    EXPECT_EQ(p->severity, Severity::drain);
    EXPECT_EQ(p->message, "7 GPUs visible, 8 expected");
}

struct Case {
    const char *name;
    void (*mutate)(GpuSnapshot &);
    const char *check;
    Severity severity;
    const char *message;
};

const Case kCases[] = {
    {"lost", [](GpuSnapshot &g) { g.lost = "GPU is lost"; }, "gpu_lost", Severity::drain,
     "GPU 3 (00000000:13:00.0): GPU is lost"},
    {"ecc", [](GpuSnapshot &g) { g.ecc_uncorrected_volatile = 2; }, "ecc_uncorrected",
     Severity::drain, "GPU 3 (00000000:13:00.0): 2 volatile uncorrectable ECC errors"},
    {"retired", [](GpuSnapshot &g) { g.retired_pages_pending = true; }, "retired_pages_pending",
     Severity::drain, "GPU 3 (00000000:13:00.0): retired pages pending (reset the GPU or reboot)"},
    {"remap_pending", [](GpuSnapshot &g) { g.remap_pending = true; }, "row_remap", Severity::drain,
     "GPU 3 (00000000:13:00.0): row remap pending (reset the GPU or reboot)"},
    {"remap_failed", [](GpuSnapshot &g) { g.remap_failed = true; }, "row_remap", Severity::drain,
     "GPU 3 (00000000:13:00.0): row remapping failed (replace the GPU)"},
    {"width", [](GpuSnapshot &g) { g.pcie_width = 8; }, "pcie_link", Severity::drain,
     "GPU 3 (00000000:13:00.0): PCIe link width x8 below its maximum x16"},
    {"gen_busy",
     [](GpuSnapshot &g) {
         g.pcie_gen = 3;
         g.throttle_reasons = 0;
     },
     "pcie_link", Severity::drain,
     "GPU 3 (00000000:13:00.0): PCIe link generation 3 below its maximum 5"},
    {"gen_idle", [](GpuSnapshot &g) { g.pcie_gen = 1; }, "pcie_link", Severity::warn,
     "GPU 3 (00000000:13:00.0): PCIe link generation 1 below its maximum 5 (GPU idle, may be "
     "power saving)"},
    {"nvlink",
     [](GpuSnapshot &g) {
         g.nvlinks_inactive = {5, 7};
     },
     "nvlink", Severity::drain, "GPU 3 (00000000:13:00.0): 2 of 18 NVLinks inactive (links 5,7)"},
    {"hot", [](GpuSnapshot &g) { g.temperature_c = 92; }, "temperature", Severity::warn,
     "GPU 3 (00000000:13:00.0): temperature 92 C at or above 85 C"},
    {"slowdown_temp",
     [](GpuSnapshot &g) {
         g.temperature_c = 80;
         g.slowdown_temp_c = 80;
     },
     "temperature", Severity::warn, "GPU 3 (00000000:13:00.0): temperature 80 C at or above 80 C"},
    {"throttle", [](GpuSnapshot &g) { g.throttle_reasons = kThrottleHwThermal | 0x4; },
     "clock_throttle", Severity::warn,
     "GPU 3 (00000000:13:00.0): clocks throttled: HW thermal "
     "slowdown"},
};

TEST(GpuChecks, EachFailureModeOnOneGpu) {
    for (const auto &c : kCases) {
        auto n = healthy_node();
        c.mutate(n.gpus[3]);
        const auto e = evaluate(n, {}, cfg8());
        const auto *p = only_problem(e);
        ASSERT_NE(p, nullptr) << c.name;
        EXPECT_EQ(p->check, c.check) << c.name;
        EXPECT_EQ(p->gpu, 3U) << c.name;
        EXPECT_EQ(p->severity, c.severity) << c.name;
        EXPECT_EQ(p->message, c.message) << c.name;
        EXPECT_EQ(e.must_drain(), c.severity == Severity::drain) << c.name;
        bool found_bad_status = false;
        for (const auto &s : e.statuses) {
            if (!s.ok) {
                EXPECT_EQ(s.check, c.check) << c.name;
                EXPECT_EQ(s.gpu, 3U) << c.name;
                found_bad_status = true;
            }
        }
        EXPECT_TRUE(found_bad_status) << c.name;
    }
}

TEST(GpuChecks, NotSupportedQueriesAreSkippedNotFailed) {
    auto n = healthy_node();
    n.gpus[0].nvlinks_total.reset(); // PCIe card without NVLink
    n.gpus[0].remap_pending.reset();
    n.gpus[0].remap_failed.reset();
    const auto e = evaluate(n, {}, cfg8());
    EXPECT_TRUE(e.problems.empty());
    EXPECT_EQ(e.statuses.size(), 2U + 8U * 8U - 2U);
}

TEST(GpuChecks, FatalXidDrainsTheMatchingGpu) {
    XidEvent x{1, "0000:13:00", 79, "Xid (PCI:0000:13:00): 79, GPU has fallen off the bus."};
    XidEvent orphan{2, "0000:99:00", 48, "Xid (PCI:0000:99:00): 48, DBE"};
    const auto e = evaluate(healthy_node(), {x, orphan}, cfg8());
    ASSERT_EQ(e.problems.size(), 2U);
    EXPECT_EQ(e.problems[0].gpu, 3U);
    EXPECT_EQ(e.problems[0].message,
              "GPU 3 (00000000:13:00.0): fatal Xid 79: Xid (PCI:0000:13:00): 79, GPU has fallen "
              "off the bus.");
    EXPECT_FALSE(e.problems[1].gpu.has_value());
    EXPECT_TRUE(e.must_drain());
    EXPECT_EQ(e.cause(), e.problems[0].message + " (+1 more)");
}

TEST(GpuChecks, ProbeFailureDrains) {
    const auto e = evaluate_probe_failure("NVML call nvmlDeviceGetTotalEccErrors on GPU 3 hung");
    EXPECT_TRUE(e.must_drain());
    EXPECT_EQ(e.cause(), "NVML call nvmlDeviceGetTotalEccErrors on GPU 3 hung");
}

TEST(GpuChecks, GresCount) {
    EXPECT_EQ(gpu_count_from_gres("gpu:8"), 8U);
    EXPECT_EQ(gpu_count_from_gres("gpu:h100:8(S:0-1)"), 8U);
    EXPECT_EQ(gpu_count_from_gres("nic:2,gpu:h100:4,gpu:a100:4"), 8U);
    EXPECT_FALSE(gpu_count_from_gres("").has_value());
    EXPECT_FALSE(gpu_count_from_gres("nic:2").has_value());
    EXPECT_FALSE(gpu_count_from_gres("mps:100").has_value());
}

} // namespace
} // namespace sjh
