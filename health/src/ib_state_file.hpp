// SPDX-License-Identifier: Apache-2.0
// The InfiniBand/RoCE port state file (thin system layer), kept next to the
// failure counter in the state directory and written the same way.
#pragma once

#include "ib_state.hpp"

#include <string>

namespace sjh {

// The file's name in the state directory.
inline constexpr const char *kIbStateFile = "gpu-check.ib-ports";

// A missing file means an empty state. A corrupt one is an error naming the
// file and the fix.
IbState read_ib_state(const std::string &path);

// Replaces the file atomically (a new temp file renamed over the old one).
void write_ib_state(const std::string &path, const IbState &state);

} // namespace sjh
