// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/job_layout.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <sys/wait.h>

namespace sjail {
namespace {

template <typename T> std::optional<T> number(std::string_view text) {
    T value{};
    const auto *end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end) {
        return std::nullopt;
    }
    return value;
}

} // namespace

std::string jobs_dir(const std::string &state) {
    return state + "/jobs";
}

JobPaths job_paths(const std::string &state, std::uint32_t job) {
    const std::string dir = jobs_dir(state) + "/" + std::to_string(job);
    return {dir,           dir + "/stepd", dir + "/tasks", dir + "/pid",
            dir + "/init", dir + "/lock",  dir + "/ready"};
}

std::optional<std::uint32_t> job_of_entry(std::string_view name) {
    if (name.empty() || name.front() == '0') {
        return std::nullopt;
    }
    return number<std::uint32_t>(name);
}

std::string job_tmp_name(std::uint32_t job) {
    return "job-" + std::to_string(job);
}

std::string format_init_id(const InitId &id) {
    return std::to_string(id.pid) + " " + std::to_string(id.start_time) + "\n";
}

std::optional<InitId> parse_init_id(std::string_view text) {
    if (!text.empty() && text.back() == '\n') {
        text.remove_suffix(1);
    }
    const auto space = text.find(' ');
    if (space == std::string_view::npos) {
        return std::nullopt;
    }
    const auto pid = number<pid_t>(text.substr(0, space));
    const auto start = number<std::uint64_t>(text.substr(space + 1));
    if (!pid || !start || *pid <= 0) {
        return std::nullopt;
    }
    return InitId{*pid, *start};
}

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
    return word ? number<std::uint64_t>(*word) : std::nullopt;
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

std::optional<StepdOf> stepd_of_cmdline(std::string_view cmdline) {
    constexpr std::string_view prefix = "slurmstepd: [";
    if (cmdline.substr(0, prefix.size()) != prefix) {
        return std::nullopt;
    }
    const auto rest = cmdline.substr(prefix.size());
    const auto dot = rest.find('.');
    const auto close = rest.find(']');
    if (dot == std::string_view::npos || close == std::string_view::npos || close < dot) {
        return std::nullopt;
    }
    const auto job = number<std::uint32_t>(rest.substr(0, dot));
    if (!job || rest.substr(0, 1) == "0") {
        return std::nullopt;
    }
    // The step may carry a suffix after a space: "[J.extern stepmgr]" is the
    // extern step that also manages the job's steps (SlurmctldParameters=
    // enable_stepmgr, from Slurm 24.05).
    const auto step = rest.substr(dot + 1, close - dot - 1);
    return StepdOf{*job, step.substr(0, step.find(' ')) == "extern"};
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
    return number<std::uint32_t>(rest.substr(0, rest.find_first_of(" \t\n")));
}

bool JobWatch::wants_node_scan(Clock::time_point now, bool others_in_namespace) const {
    return !others_in_namespace || (!contained_ && now - start_ < kLookForExtern);
}

void JobWatch::saw(Clock::time_point now, bool job_seen, bool extern_seen) {
    contained_ = contained_ || extern_seen;
    if (job_seen || extern_seen) {
        last_seen_ = now;
    }
}

bool JobWatch::gone(Clock::time_point now) const {
    return now - last_seen_ >= (contained_ ? kContainedGrace : kUncontainedGrace);
}

} // namespace sjail
