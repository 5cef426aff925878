// SPDX-License-Identifier: Apache-2.0
// What the quick check remembers about the node's InfiniBand/RoCE ports
// between runs (pure; the file itself: ib_state_file.hpp): the ports that were
// up, with their rates, at the last passing run, and every port's error
// counters at the last run.
#pragma once

#include "ib_ports.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjh {

struct IbCounters {
    std::optional<std::uint64_t> link_downed;
    std::optional<std::uint64_t> symbol_error;
    bool operator==(const IbCounters &) const = default;
};

struct IbState {
    std::map<std::string, double> passed_rates; // port -> Gb/s at the last passing run
    std::map<std::string, IbCounters> counters; // port -> counters at the last run
    bool empty() const { return passed_rates.empty() && counters.empty(); }
    bool operator==(const IbState &) const = default;
};

// The state after this run: the counters read now; the ports up now (with
// their rates) when the run passed, else the previous run's expectation.
IbState next_ib_state(const std::vector<IbPortReading> &ports, const IbState &previous,
                      bool passed);

// The file's contents, JSON: {"passed_rates": {"mlx5_0/1": 400}, "counters":
// {"mlx5_0/1": {"link_downed": 0, "symbol_error": 3}}}. parse throws
// std::runtime_error saying what it expected.
IbState parse_ib_state(std::string_view text);
std::string render_ib_state(const IbState &state);

} // namespace sjh
