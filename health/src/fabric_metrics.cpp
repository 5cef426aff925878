// SPDX-License-Identifier: Apache-2.0
#include "fabric_metrics.hpp"

#include "prometheus_text.hpp"

#include <fmt/format.h>

namespace sjh {
namespace {

// One gauge: its HELP and TYPE lines, then a sample per (labels, value).
std::string gauge(std::string_view name, std::string_view help,
                  const std::vector<std::pair<std::string, std::string>> &samples) {
    if (samples.empty()) {
        return {};
    }
    std::string out = fmt::format("# HELP slurm_jail_nccl_fabric_{0} {1}\n"
                                  "# TYPE slurm_jail_nccl_fabric_{0} gauge\n",
                                  name, help);
    for (const auto &[labels, value] : samples) {
        out += fmt::format("slurm_jail_nccl_fabric_{}{{{}}} {}\n", name, labels, value);
    }
    return out;
}

std::string group_labels(const FabricMetrics &m, const GroupResult &g) {
    return fmt::format(R"(group="{}",size="{}",model="{}",gpus="{}")",
                       prometheus_label(group_name(g.nodes)), g.nodes.size(),
                       prometheus_label(m.model), m.gpus);
}

std::string render_groups(const FabricMetrics &m) {
    std::vector<std::pair<std::string, std::string>> ok;
    std::vector<std::pair<std::string, std::string>> busbw;
    ok.reserve(m.groups.size());
    busbw.reserve(m.groups.size());
    for (const auto &g : m.groups) {
        ok.emplace_back(group_labels(m, g), g.pass ? "1" : "0");
        if (g.busbw) {
            busbw.emplace_back(group_labels(m, g), fmt::format("{}", *g.busbw));
        }
    }
    std::vector<std::pair<std::string, std::string>> thresholds;
    thresholds.reserve(m.threshold_gbps.size());
    for (const auto &[size, gbps] : m.threshold_gbps) {
        thresholds.emplace_back(fmt::format(R"(size="{}",model="{}",gpus="{}")", size,
                                            prometheus_label(m.model), m.gpus),
                                fmt::format("{}", gbps));
    }
    return gauge("group_ok", "1 if the group's all_reduce_perf run passed, 0 if it failed.", ok) +
           gauge("group_busbw_gbps", "The group's bus bandwidth at the largest size, GB/s.",
                 busbw) +
           gauge("threshold_gbps",
                 "The minimum busbw a group of that size was judged against, "
                 "GB/s.",
                 thresholds);
}

} // namespace

std::string render_fabric_metrics(const FabricMetrics &m) {
    const auto run = fmt::format(R"(model="{}",gpus="{}",nodes="{}")", prometheus_label(m.model),
                                 m.gpus, m.nodes.size());
    const bool pass = !m.groups.empty() && m.groups.front().pass;
    std::vector<std::pair<std::string, std::string>> blamed;
    blamed.reserve(m.nodes.size());
    for (const auto &node : m.nodes) {
        blamed.emplace_back(fmt::format(R"(node="{}")", prometheus_label(node)),
                            m.blamed == node ? "1" : "0");
    }
    return gauge("ok", "1 if the run across all tested nodes passed, 0 if it failed.",
                 {{run, pass ? "1" : "0"}}) +
           render_groups(m) +
           gauge("node_blamed",
                 "1 for the node the pairs blamed (drained unless the drain cap stopped it), 0 "
                 "for every other tested node.",
                 blamed) +
           gauge("duration_seconds", "Wall time of the multi-node NCCL check.",
                 {{run, fmt::format("{:.3f}", m.duration_s)}}) +
           gauge("last_run_timestamp_seconds", "When the multi-node NCCL check last ran.",
                 {{run, fmt::format("{:.3f}", m.timestamp_s)}});
}

} // namespace sjh
