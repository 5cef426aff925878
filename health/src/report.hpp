// SPDX-License-Identifier: Apache-2.0
// Rendering the quick check's result for people, machines and Prometheus (pure).
#pragma once

#include "gpu_checks.hpp"
#include "ib_ports.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sjh {

struct RunInfo {
    std::string node;
    double duration_s = 0;
    double timestamp_s = 0; // unix time of the run
};

// One line per problem: "DRAIN GPU 3 (...): ..." / "WARN ...", or "OK ..." when none.
std::string render_human(const Evaluation &e, const RunInfo &info);

nlohmann::json render_json(const Evaluation &e, const std::optional<NodeSnapshot> &snapshot,
                           const RunInfo &info);

// node_exporter textfile format: slurm_jail_gpu_check_ok{check,gpu} 0|1, plus
// slurm_jail_gpu_check_drain, _duration_seconds and _last_run_timestamp_seconds.
std::string render_metrics(const Evaluation &e, const RunInfo &info);

// Per InfiniBand/RoCE port, labelled {node,port,link_layer}:
// slurm_jail_gpu_check_ib_port_up 0|1, _ib_port_rate_gbps, _ib_port_link_downed
// and _ib_port_symbol_error (each value only where sysfs gave it). Empty
// without ports.
std::string render_ib_port_metrics(const std::vector<IbPortReading> &ports, const RunInfo &info);

// The ports for --json: name, link_layer, state, phys_state, up, rate (the
// sysfs text), rate_gbps and the counters (null where unknown).
nlohmann::json render_ib_ports_json(const std::vector<IbPortReading> &ports);

} // namespace sjh
