// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/proc_options.hpp"

#include "sjail/core/mountinfo.hpp"
#include "sjail/core/path_rules.hpp"

#include <array>

namespace sjail {
namespace {

bool is_hidepid_value(std::string_view v) {
    constexpr std::array<std::string_view, 8> known = {
        "0", "1", "2", "4", "off", "noaccess", "invisible", "ptraceable"};
    for (const auto k : known) {
        if (v == k) {
            return true;
        }
    }
    return false;
}

} // namespace

Status parse_proc_setting(std::string_view text, ProcOptions &out) {
    out = {};
    for (const auto option : split(text, ',')) {
        const auto eq = option.find('=');
        const std::string_view key = option.substr(0, eq);
        const std::string_view value = eq == std::string_view::npos ? "" : option.substr(eq + 1);
        if (key == "hidepid" && is_hidepid_value(value)) {
            out.hidepid = value;
        } else if (key == "gid" && !value.empty() &&
                   value.find_first_of(" /:") == std::string_view::npos) {
            out.gid = value;
        } else if (key == "subset" && value == "pid") {
            out.subset = value;
        } else {
            return Status::failure(
                "proc=" + std::string(text) + ": '" + std::string(option) +
                "' is not understood; give hidepid=off|noaccess|invisible|ptraceable, "
                "gid=GROUP and subset=pid, separated by commas");
        }
    }
    return {};
}

ProcOptions proc_options_of(std::string_view super_options) {
    ProcOptions options;
    for (const auto option : split(super_options, ',')) {
        const auto eq = option.find('=');
        const auto key = option.substr(0, eq);
        const auto value = eq == std::string_view::npos ? "" : option.substr(eq + 1);
        if (key == "hidepid") {
            options.hidepid = value;
        } else if (key == "gid") {
            options.gid = value;
        } else if (key == "subset") {
            options.subset = value;
        }
    }
    return options;
}

ProcOptions node_proc_options(std::string_view mountinfo) {
    ProcOptions options;
    for (const auto text : split(mountinfo, '\n')) {
        const auto line = parse_mountinfo_line(text);
        if (line && line->head.size() >= 5 && line->head[4] == "/proc" && line->tail.size() >= 3 &&
            line->tail[0] == "proc") {
            options = proc_options_of(line->tail[2]);
        }
    }
    return options; // the last /proc mount is the one in effect
}

std::optional<std::string> super_options_of_mount(std::string_view mountinfo,
                                                  std::uint64_t mount_id) {
    const auto line = mountinfo_line_of(mountinfo, mount_id);
    if (!line) {
        return std::nullopt;
    }
    return line->tail.size() < 3 ? std::string() : std::string(line->tail[2]);
}

std::vector<std::pair<std::string, std::string>> proc_mount_parameters(const ProcOptions &options) {
    std::vector<std::pair<std::string, std::string>> params;
    if (!options.hidepid.empty()) {
        params.emplace_back("hidepid", options.hidepid);
    }
    if (!options.gid.empty()) {
        params.emplace_back("gid", options.gid);
    }
    if (!options.subset.empty()) {
        params.emplace_back("subset", options.subset);
    }
    return params;
}

} // namespace sjail
