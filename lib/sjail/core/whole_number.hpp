// SPDX-License-Identifier: Apache-2.0
// A whole number read from text that holds nothing else. Pure.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace sjail {

// `text` as a whole number of type T (decimal, nothing around it, in T's
// range), or nothing.
template <typename T> std::optional<T> whole_number(std::string_view text) {
    T value{};
    const auto *end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end) {
        return std::nullopt;
    }
    return value;
}

} // namespace sjail
