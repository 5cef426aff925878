// SPDX-License-Identifier: Apache-2.0
// Reading the InfiniBand and RoCE ports from sysfs (thin system layer):
// <sysfs root>/class/infiniband/<hca>/ports/<n>/{state,phys_state,rate,
// link_layer,counters/link_downed,counters/symbol_error}.
#pragma once

#include "ib_ports.hpp"

#include <string>
#include <vector>

namespace sjh {

inline constexpr const char *kDefaultSysfsRoot = "/sys";

// Every port of every HCA, by HCA name and port number; none when the node
// has no class/infiniband (no RDMA driver loaded). Throws std::runtime_error
// naming the directory when one exists but cannot be listed.
std::vector<IbPortReading> read_ib_ports(const std::string &sysfs_root);

} // namespace sjh
