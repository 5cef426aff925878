// SPDX-License-Identifier: Apache-2.0
// InfiniBand and RoCE ports as the kernel shows them under
// /sys/class/infiniband/<hca>/ports/<n>/, and the operator's port settings
// (pure; reading sysfs: ib_sysfs.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjh {

// One port's files, trimmed; a file that could not be read is empty or absent.
struct IbPortReading {
    std::string name;                          // "mlx5_0/1": the HCA and the port number
    std::string state;                         // "4: ACTIVE"
    std::string phys_state;                    // "5: LinkUp"
    std::string rate;                          // "400 Gb/sec (4X NDR)"
    std::string link_layer;                    // "InfiniBand", or "Ethernet" for RoCE
    std::optional<std::uint64_t> link_downed;  // counters/link_downed
    std::optional<std::uint64_t> symbol_error; // counters/symbol_error
};

// ACTIVE logically and LinkUp physically: the port carries traffic.
bool port_is_up(const IbPortReading &port);

// "ACTIVE" from "4: ACTIVE", "LinkUp" from "5: LinkUp"; the text itself when
// it has no "N: " in front.
std::string_view port_state_name(std::string_view sysfs_state);

// 400 from "400 Gb/sec (4X NDR)", 2.5 from "2.5 Gb/sec (1X SDR)"; nullopt for
// anything else.
std::optional<double> parse_ib_rate(std::string_view sysfs_rate);

// --ib-ports: "mlx5_0/1,mlx5_1/1" in that order, blanks around entries
// allowed. Throws std::invalid_argument naming the bad entry and the form.
std::vector<std::string> parse_ib_port_list(std::string_view text);

// --ib-min-rate: Gb/s, a number above 0 ("400"; "400 Gb/sec" also reads).
// Throws std::invalid_argument naming the text and the fix.
double parse_ib_min_rate(std::string_view text);

} // namespace sjh
