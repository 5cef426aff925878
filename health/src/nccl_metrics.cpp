// SPDX-License-Identifier: Apache-2.0
#include "nccl_metrics.hpp"

#include "prometheus_text.hpp"

#include <fmt/format.h>

namespace sjh {
namespace {

std::string gauge(std::string_view name, std::string_view help, const std::string &labels,
                  const std::string &value) {
    return fmt::format("# HELP slurm_jail_nccl_check_{0} {1}\n"
                       "# TYPE slurm_jail_nccl_check_{0} gauge\n"
                       "slurm_jail_nccl_check_{0}{{{2}}} {3}\n",
                       name, help, labels, value);
}

} // namespace

std::string render_nccl_metrics(const NcclMetrics &m) {
    const auto labels =
        fmt::format(R"(node="{}",model="{}",gpus="{}",nodes="{}")", prometheus_label(m.node),
                    prometheus_label(m.model), m.gpus, m.nodes);
    std::string out =
        gauge("ok", "1 if the NCCL check passed, 0 if it failed.", labels, m.pass ? "1" : "0");
    if (m.busbw_gbps) {
        out += gauge("busbw_gbps", "all_reduce_perf bus bandwidth at the largest size, GB/s.",
                     labels, fmt::format("{}", *m.busbw_gbps));
    }
    if (m.threshold_gbps) {
        out += gauge("threshold_gbps", "The minimum busbw the run was judged against, GB/s.",
                     labels, fmt::format("{}", *m.threshold_gbps));
    }
    out += gauge("duration_seconds", "Wall time of the NCCL check.", labels,
                 fmt::format("{:.3f}", m.duration_s));
    out += gauge("last_run_timestamp_seconds", "When the NCCL check last ran.", labels,
                 fmt::format("{:.3f}", m.timestamp_s));
    return out;
}

} // namespace sjh
