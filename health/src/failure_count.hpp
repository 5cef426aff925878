// The consecutive-failure counter kept in a small JSON state file, so that a
// check can drain only after N failures in a row. Written atomically.
#pragma once

#include <string>
#include <string_view>

namespace sjh {

// Pure: the count after this run.
inline unsigned next_failure_count(unsigned previous, bool passed) {
    return passed ? 0 : previous + 1;
}

// Pure: parse/render the file's contents. parse throws std::runtime_error on
// anything but {"check": "<check>", "consecutive_failures": N}.
unsigned parse_failure_state(std::string_view text, std::string_view check);
std::string render_failure_state(std::string_view check, unsigned count);

// Thin: a missing file means 0. A corrupt file is an error naming the file.
unsigned read_failure_count(const std::string &path, std::string_view check);
void write_failure_count(const std::string &path, std::string_view check, unsigned count);

} // namespace sjh
