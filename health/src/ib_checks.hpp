// SPDX-License-Identifier: Apache-2.0
// The quick check's verdict over the node's InfiniBand and RoCE ports (pure):
// the expected ports must be up at their expected rate, and must not have lost
// their link since the last run.
#pragma once

#include "gpu_checks.hpp"
#include "ib_ports.hpp"
#include "ib_state.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sjh {

struct IbCheckConfig {
    std::vector<std::string> ports;       // --ib-ports; empty: see expected_ib_ports
    std::optional<double> min_rate_gbps;  // --ib-min-rate; absent: the rate at the last pass
    std::uint64_t symbol_error_drain = 0; // drain when symbol_error grew by more; 0: report only
};

// The ports the node is held to: --ib-ports, else those up at the last passing
// run, else (no passing run recorded) those up now.
std::vector<std::string> expected_ib_ports(const std::vector<IbPortReading> &ports,
                                           const IbCheckConfig &cfg, const IbState &previous);

// How much a counter grew since the last run; 0 when it went down (reset by a
// reboot or a driver reload), nullopt when either value is unknown.
std::optional<std::uint64_t> counter_growth(std::optional<std::uint64_t> now,
                                            std::optional<std::uint64_t> before);

// Adds the problems and the node-level statuses ib_port, ib_rate,
// ib_link_downed and ib_symbol_error to `e`; nothing at all when the node has
// no port and none is expected.
void evaluate_ib(const std::vector<IbPortReading> &ports, const IbCheckConfig &cfg,
                 const IbState &previous, Evaluation &e);

} // namespace sjh
