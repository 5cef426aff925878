// SPDX-License-Identifier: Apache-2.0
#include "gpu_checks.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <regex>

namespace sjh {
namespace {

class Collector {
  public:
    explicit Collector(Evaluation &e) : e_(e) {}
    void status(const std::string &check, std::optional<unsigned> gpu, bool ok) {
        e_.statuses.push_back({check, gpu, ok});
    }
    void problem(const std::string &check, std::optional<unsigned> gpu, Severity s,
                 std::string msg) {
        e_.problems.push_back({check, gpu, s, std::move(msg)});
    }

  private:
    Evaluation &e_;
};

std::string gpu_label(const GpuSnapshot &g) {
    return g.bus_id.empty() ? fmt::format("GPU {}", g.index)
                            : fmt::format("GPU {} ({})", g.index, g.bus_id);
}

void check_memory(Collector &c, const GpuSnapshot &g) {
    const auto label = gpu_label(g);
    if (g.ecc_uncorrected_volatile) {
        const bool ok = *g.ecc_uncorrected_volatile == 0;
        c.status("ecc_uncorrected", g.index, ok);
        if (!ok) {
            c.problem("ecc_uncorrected", g.index, Severity::drain,
                      fmt::format("{}: {} volatile uncorrectable ECC errors", label,
                                  *g.ecc_uncorrected_volatile));
        }
    }
    if (g.retired_pages_pending) {
        const bool ok = !*g.retired_pages_pending;
        c.status("retired_pages_pending", g.index, ok);
        if (!ok) {
            c.problem("retired_pages_pending", g.index, Severity::drain,
                      fmt::format("{}: retired pages pending (reset the GPU or reboot)", label));
        }
    }
    if (g.remap_pending || g.remap_failed) {
        const bool pending = g.remap_pending.value_or(false);
        const bool failed = g.remap_failed.value_or(false);
        c.status("row_remap", g.index, !pending && !failed);
        if (failed) {
            c.problem("row_remap", g.index, Severity::drain,
                      fmt::format("{}: row remapping failed (replace the GPU)", label));
        } else if (pending) {
            c.problem("row_remap", g.index, Severity::drain,
                      fmt::format("{}: row remap pending (reset the GPU or reboot)", label));
        }
    }
}

void check_links(Collector &c, const GpuSnapshot &g) {
    const auto label = gpu_label(g);
    if (g.pcie_width && g.pcie_width_max && g.pcie_gen && g.pcie_gen_max) {
        const bool narrow = *g.pcie_width < *g.pcie_width_max;
        const bool slow = *g.pcie_gen < *g.pcie_gen_max;
        // An idle GPU may lower its link generation to save power.
        const bool idle = (g.throttle_reasons.value_or(0) & kThrottleIdle) != 0;
        c.status("pcie_link", g.index, !narrow && !slow);
        if (narrow) {
            c.problem("pcie_link", g.index, Severity::drain,
                      fmt::format("{}: PCIe link width x{} below its maximum x{}", label,
                                  *g.pcie_width, *g.pcie_width_max));
        }
        if (slow) {
            c.problem("pcie_link", g.index, idle ? Severity::warn : Severity::drain,
                      fmt::format("{}: PCIe link generation {} below its maximum {}{}", label,
                                  *g.pcie_gen, *g.pcie_gen_max,
                                  idle ? " (GPU idle, may be power saving)" : ""));
        }
    }
    if (g.nvlinks_total) {
        const bool ok = g.nvlinks_inactive.empty();
        c.status("nvlink", g.index, ok);
        if (!ok) {
            c.problem("nvlink", g.index, Severity::drain,
                      fmt::format("{}: {} of {} NVLinks inactive (links {})", label,
                                  g.nvlinks_inactive.size(), *g.nvlinks_total,
                                  fmt::join(g.nvlinks_inactive, ",")));
        }
    }
}

void check_heat(Collector &c, const GpuSnapshot &g, const GpuCheckConfig &cfg) {
    const auto label = gpu_label(g);
    if (g.temperature_c) {
        unsigned limit = cfg.temp_warn_c;
        if (g.slowdown_temp_c) {
            limit = std::min(limit, *g.slowdown_temp_c);
        }
        const bool ok = *g.temperature_c < limit;
        c.status("temperature", g.index, ok);
        if (!ok) {
            c.problem("temperature", g.index, Severity::warn,
                      fmt::format("{}: temperature {} C at or above {} C", label, *g.temperature_c,
                                  limit));
        }
    }
    if (g.throttle_reasons) {
        const std::uint64_t r = *g.throttle_reasons;
        std::vector<std::string> why;
        if ((r & kThrottleHwSlowdown) != 0) {
            why.emplace_back("HW slowdown");
        }
        if ((r & kThrottleHwThermal) != 0) {
            why.emplace_back("HW thermal slowdown");
        }
        if ((r & kThrottleSwThermal) != 0) {
            why.emplace_back("SW thermal slowdown");
        }
        if ((r & kThrottleHwPowerBrake) != 0) {
            why.emplace_back("HW power brake");
        }
        c.status("clock_throttle", g.index, why.empty());
        if (!why.empty()) {
            c.problem("clock_throttle", g.index, Severity::warn,
                      fmt::format("{}: clocks throttled: {}", label, fmt::join(why, ", ")));
        }
    }
}

void check_xids(Collector &c, const NodeSnapshot &node, const std::vector<XidEvent> &xids) {
    std::vector<bool> matched(xids.size(), false);
    for (const auto &g : node.gpus) {
        bool ok = true;
        for (std::size_t i = 0; i < xids.size(); ++i) {
            if (same_pci_device(g.bus_id, xids[i].pci)) {
                matched[i] = true;
                ok = false;
                c.problem(
                    "xid", g.index, Severity::drain,
                    fmt::format("{}: fatal Xid {}: {}", gpu_label(g), xids[i].xid, xids[i].text));
            }
        }
        c.status("xid", g.index, ok);
    }
    for (std::size_t i = 0; i < xids.size(); ++i) {
        if (!matched[i]) { // a GPU NVML no longer lists (e.g. fell off the bus)
            c.problem(
                "xid", std::nullopt, Severity::drain,
                fmt::format("fatal Xid {} on PCI {}: {}", xids[i].xid, xids[i].pci, xids[i].text));
        }
    }
}

} // namespace

bool Evaluation::must_drain() const {
    return std::any_of(problems.begin(), problems.end(),
                       [](const Problem &p) { return p.severity == Severity::drain; });
}

std::string Evaluation::cause() const {
    std::string first;
    std::size_t n = 0;
    for (const auto &p : problems) {
        if (p.severity == Severity::drain) {
            if (n++ == 0) {
                first = p.message;
            }
        }
    }
    return n > 1 ? fmt::format("{} (+{} more)", first, n - 1) : first;
}

Evaluation evaluate_probe_failure(const std::string &message) {
    Evaluation e;
    Collector c(e);
    c.status("nvml", std::nullopt, false);
    c.problem("nvml", std::nullopt, Severity::drain, message);
    return e;
}

Evaluation evaluate(const NodeSnapshot &node, const std::vector<XidEvent> &fatal_xids,
                    const GpuCheckConfig &cfg) {
    Evaluation e;
    Collector c(e);
    c.status("nvml", std::nullopt, true);
    const auto found = static_cast<unsigned>(node.gpus.size());
    const bool count_ok = found >= cfg.expected_gpus;
    c.status("gpu_count", std::nullopt, count_ok);
    if (!count_ok) {
        c.problem("gpu_count", std::nullopt, Severity::drain,
                  fmt::format("{} GPUs visible, {} expected", found, cfg.expected_gpus));
    } else if (found > cfg.expected_gpus) {
        c.problem("gpu_count", std::nullopt, Severity::warn,
                  fmt::format("{} GPUs visible, only {} expected (check the configuration)", found,
                              cfg.expected_gpus));
    }
    for (const auto &g : node.gpus) {
        c.status("gpu_lost", g.index, g.lost.empty());
        if (!g.lost.empty()) {
            c.problem("gpu_lost", g.index, Severity::drain,
                      fmt::format("{}: {}", gpu_label(g), g.lost));
            continue;
        }
        for (const auto &err : g.errors) {
            c.problem("nvml", g.index, Severity::warn,
                      fmt::format("{}: NVML query failed: {}", gpu_label(g), err));
        }
        check_memory(c, g);
        check_links(c, g);
        check_heat(c, g, cfg);
    }
    check_xids(c, node, fatal_xids);
    return e;
}

std::optional<unsigned> gpu_count_from_gres(std::string_view gres) {
    static const std::regex re(R"((?:^|,)gpu(?::[^:,(]+)?:(\d+))");
    const std::string s(gres);
    unsigned total = 0;
    bool any = false;
    for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator();
         ++it) {
        total += static_cast<unsigned>(std::stoul((*it).str(1)));
        any = true;
    }
    return any ? std::optional<unsigned>(total) : std::nullopt;
}

} // namespace sjh
