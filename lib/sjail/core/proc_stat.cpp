// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/proc_stat.hpp"

#include "sjail/core/whole_number.hpp"

#include <algorithm>
#include <cstring>
#include <sys/wait.h>

namespace sjail {
namespace {

// Field `wanted` (3 or more) of a /proc/PID/stat line, as text.
std::optional<std::string_view> stat_word(std::string_view stat, int wanted) {
    const auto close = stat.rfind(')');
    if (close == std::string_view::npos || wanted < 3) {
        return std::nullopt;
    }
    // After ") ": field 3 (state) is the first.
    std::string_view rest = stat.substr(close + 1);
    for (int field = 3; field <= wanted; ++field) {
        const auto start = rest.find_first_not_of(' ');
        if (start == std::string_view::npos) {
            return std::nullopt;
        }
        rest = rest.substr(start);
        const auto end = std::min(rest.find_first_of(" \n"), rest.size());
        if (field == wanted) {
            return rest.substr(0, end);
        }
        rest = rest.substr(end);
    }
    return std::nullopt;
}

std::optional<std::uint64_t> stat_field(std::string_view stat, int wanted) {
    const auto word = stat_word(stat, wanted);
    return word ? whole_number<std::uint64_t>(*word) : std::nullopt;
}

} // namespace

std::optional<std::uint64_t> start_time_of_stat(std::string_view stat) {
    return stat_field(stat, 22);
}

bool has_ended_in_stat(std::string_view stat) {
    const auto state = stat_word(stat, 3);
    return state && (*state == "Z" || *state == "X");
}

std::optional<int> exit_code_of_stat(std::string_view stat) {
    const auto code = stat_field(stat, 52);
    if (!code || *code > 0xffff) {
        return std::nullopt;
    }
    return static_cast<int>(*code);
}

std::string how_it_ended(int wait_status) {
    if (WIFSIGNALED(wait_status)) {
        const int sig = WTERMSIG(wait_status);
        const char *name = ::sigabbrev_np(sig);
        return "killed by signal " + std::to_string(sig) +
               (name != nullptr ? " (SIG" + std::string(name) + ")" : std::string());
    }
    return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
}

std::optional<ArgArea> arg_area_of_stat(std::string_view stat) {
    const auto start = stat_field(stat, 48);
    const auto end = stat_field(stat, 49);
    if (!start || !end || *start == 0 || *end <= *start) {
        return std::nullopt;
    }
    return ArgArea{*start, *end};
}

std::optional<std::uint32_t> real_uid_of_status(std::string_view status) {
    constexpr std::string_view key = "\nUid:";
    const auto at = status.find(key);
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    auto rest = status.substr(at + key.size());
    const auto start = rest.find_first_not_of(" \t");
    if (start == std::string_view::npos) {
        return std::nullopt;
    }
    rest = rest.substr(start);
    return whole_number<std::uint32_t>(rest.substr(0, rest.find_first_of(" \t\n")));
}

} // namespace sjail
