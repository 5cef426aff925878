// SPDX-License-Identifier: Apache-2.0
#include "cli_config.hpp"

#include "text.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace sjh {
namespace {

std::string unquote(std::string_view v) {
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
        return std::string(v.substr(1, v.size() - 2));
    }
    return std::string(v);
}

} // namespace

std::vector<std::string> config_args(std::string_view text, std::string_view section) {
    std::vector<std::string> out;
    std::string current;
    unsigned lineno = 0;
    for (const auto raw : lines(text)) {
        const auto line = trim(raw);
        ++lineno;
        if (line.empty() || line.front() == '#' || line.front() == ';') {
            continue;
        }
        if (line.front() == '[' && line.back() == ']') {
            current = std::string(trim(line.substr(1, line.size() - 2)));
            continue;
        }
        const auto eq = line.find('=');
        if (eq == std::string_view::npos || trim(line.substr(0, eq)).empty()) {
            throw std::invalid_argument(fmt::format(
                "config line {}: '{}' is not 'key = value' or '[section]'", lineno, line));
        }
        if (current == section) {
            out.push_back(fmt::format("--{}={}", trim(line.substr(0, eq)),
                                      unquote(trim(line.substr(eq + 1)))));
        }
    }
    return out;
}

} // namespace sjh
