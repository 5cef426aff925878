// SPDX-License-Identifier: Apache-2.0
#include "text.hpp"

namespace sjh {

std::vector<std::string_view> split(std::string_view text, char delim) {
    std::vector<std::string_view> out;
    std::size_t pos = 0;
    for (;;) {
        const auto end = text.find(delim, pos);
        if (end == std::string_view::npos) {
            out.push_back(text.substr(pos));
            return out;
        }
        out.push_back(text.substr(pos, end - pos));
        pos = end + 1;
    }
}

std::vector<std::string_view> lines(std::string_view text) {
    if (text.ends_with('\n')) {
        text.remove_suffix(1);
    } else if (text.empty()) {
        return {};
    }
    return split(text, '\n');
}

std::string_view trim(std::string_view s) {
    constexpr std::string_view blanks = " \t\r\n";
    const auto first = s.find_first_not_of(blanks);
    if (first == std::string_view::npos) {
        return {};
    }
    return s.substr(first, s.find_last_not_of(blanks) - first + 1);
}

} // namespace sjh
