// SPDX-License-Identifier: Apache-2.0
// The multi-node NCCL check's result for node_exporter's textfile collector
// (pure): the run across all nodes, every group it ran (busbw and verdict),
// the threshold per group size, and which tested node it blamed.
//   slurm_jail_nccl_fabric_ok, _duration_seconds, _last_run_timestamp_seconds
//       {model,gpus,nodes}
//   slurm_jail_nccl_fabric_group_ok, _group_busbw_gbps {group,size,model,gpus}
//   slurm_jail_nccl_fabric_threshold_gbps {size,model,gpus}
//   slurm_jail_nccl_fabric_node_blamed {node}
#pragma once

#include "fabric_blame.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sjh {

struct FabricMetrics {
    std::string model; // the GPU model the thresholds were picked for
    unsigned gpus = 0; // per node
    std::vector<std::string> nodes;
    // The run across all nodes first, then the pairs (none when it passed).
    std::vector<GroupResult> groups;
    std::map<unsigned, double> threshold_gbps; // by group size (nodes)
    std::optional<std::string> blamed;         // drained or not (the cap)
    double duration_s = 0;
    double timestamp_s = 0; // unix time of the run
};

std::string render_fabric_metrics(const FabricMetrics &m);

} // namespace sjh
