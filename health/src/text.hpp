// SPDX-License-Identifier: Apache-2.0
// Small text helpers shared by the parsers (pure).
#pragma once

#include <string_view>
#include <vector>

namespace sjh {

// The parts between delimiters, empty ones included: "a,,b" -> {"a", "", "b"},
// "" -> {""}.
std::vector<std::string_view> split(std::string_view text, char delim);

// The lines, without their '\n'; a final '\n' ends the last line rather than
// starting an empty one, and "" has no lines.
std::vector<std::string_view> lines(std::string_view text);

// Without leading and trailing blanks (space, tab, CR, LF).
std::string_view trim(std::string_view s);

} // namespace sjh
