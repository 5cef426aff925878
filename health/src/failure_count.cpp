#include "failure_count.hpp"

#include "atomic_file.hpp"

#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
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

unsigned read_failure_count(const std::string &path, std::string_view check) {
    std::ifstream in(path);
    if (!in) {
        return 0;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        return parse_failure_state(ss.str(), check);
    } catch (const std::exception &e) {
        throw std::runtime_error(fmt::format(
            "state file '{}' is not valid: {}; fix it or delete it to restart counting at 0", path,
            e.what()));
    }
}

void write_failure_count(const std::string &path, std::string_view check, unsigned count) {
    write_file_atomically(path, render_failure_state(check, count));
}

} // namespace sjh
