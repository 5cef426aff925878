// SPDX-License-Identifier: Apache-2.0
// The consecutive-failure counter kept in a small JSON state file, so that a
// check can drain only after N failures in a row (pure; the file itself:
// failure_state_file.hpp).
#pragma once

#include <string>
#include <string_view>

namespace sjh {

// The count after this run.
inline unsigned next_failure_count(unsigned previous, bool passed) {
    return passed ? 0 : previous + 1;
}

// Parse/render the file's contents. parse throws std::runtime_error on
// anything but {"check": "<check>", "consecutive_failures": N}.
unsigned parse_failure_state(std::string_view text, std::string_view check);
std::string render_failure_state(std::string_view check, unsigned count);

} // namespace sjh
