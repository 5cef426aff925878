// SPDX-License-Identifier: Apache-2.0
// The NCCL check's result for node_exporter's textfile collector (pure):
// slurm_jail_nccl_check_ok, _busbw_gbps, _threshold_gbps, _duration_seconds
// and _last_run_timestamp_seconds, labelled {node,model,gpus,nodes}.
#pragma once

#include <optional>
#include <string>

namespace sjh {

struct NcclMetrics {
    std::string node;
    std::string model; // the GPU model the threshold was picked for
    unsigned gpus = 0; // per node
    unsigned nodes = 1;
    bool pass = false;
    std::optional<double> busbw_gbps;     // at the largest size, when measured
    std::optional<double> threshold_gbps; // when one applies
    double duration_s = 0;
    double timestamp_s = 0; // unix time of the run
};

std::string render_nccl_metrics(const NcclMetrics &m);

} // namespace sjh
