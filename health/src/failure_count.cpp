// SPDX-License-Identifier: Apache-2.0
#include "failure_count.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace sjh {

unsigned parse_failure_state(std::string_view text, std::string_view check) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("consecutive_failures") ||
        !j["consecutive_failures"].is_number_unsigned() || !j.contains("check") ||
        j["check"] != check) {
        throw std::runtime_error(
            fmt::format("expected {{\"check\": \"{}\", \"consecutive_failures\": N}}", check));
    }
    return j["consecutive_failures"].get<unsigned>();
}

std::string render_failure_state(std::string_view check, unsigned count) {
    return nlohmann::json{{"check", check}, {"consecutive_failures", count}}.dump() + "\n";
}

} // namespace sjh
