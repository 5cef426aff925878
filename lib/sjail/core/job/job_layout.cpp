// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/job/job_layout.hpp"

#include "sjail/core/whole_number.hpp"

#include <algorithm>
#include <cstring>
#include <sys/wait.h>

namespace sjail {

std::string jobs_dir(const std::string &state) {
    return state + "/jobs";
}

JobPaths job_paths(const std::string &state, std::uint32_t job) {
    const std::string dir = jobs_dir(state) + "/" + std::to_string(job);
    return {dir,           dir + "/stepd", dir + "/tasks", dir + "/pid",  dir + "/ipc",
            dir + "/init", dir + "/lock",  dir + "/ready", dir + "/user", dir + "/jail"};
}

std::array<const std::string *, 4> namespace_files(const JobPaths &paths) {
    return {&paths.stepd_ns, &paths.tasks_ns, &paths.pid_ns, &paths.ipc_ns};
}

std::optional<std::uint32_t> job_of_entry(std::string_view name) {
    if (name.empty() || name.front() == '0') {
        return std::nullopt;
    }
    return whole_number<std::uint32_t>(name);
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
    const auto pid = whole_number<pid_t>(text.substr(0, space));
    const auto start = whole_number<std::uint64_t>(text.substr(space + 1));
    if (!pid || !start || *pid <= 0) {
        return std::nullopt;
    }
    return InitId{*pid, *start};
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
    const auto job = whole_number<std::uint32_t>(rest.substr(0, dot));
    if (!job || rest.substr(0, 1) == "0") {
        return std::nullopt;
    }
    // The step may carry a suffix after a space: "[J.extern stepmgr]" is the
    // extern step that also manages the job's steps (SlurmctldParameters=
    // enable_stepmgr, from Slurm 24.05).
    const auto step = rest.substr(dot + 1, close - dot - 1);
    return StepdOf{*job, step.substr(0, step.find(' ')) == "extern"};
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
