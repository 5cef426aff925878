// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/proc_options.hpp"

#include "sjail/core/path_rules.hpp"

#include <array>
#include <sstream>

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
    std::istringstream lines{std::string(mountinfo)};
    std::string line;
    while (std::getline(lines, line)) {
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
        const auto fields = split(line, ' ');
        const auto dash = line.find(" - ");
        if (fields.size() < 5 || fields[4] != "/proc" || dash == std::string::npos) {
            continue;
        }
        const auto tail = split(std::string_view(line).substr(dash + 3), ' ');
        if (tail.size() < 3 || tail[0] != "proc") {
            continue;
        }
        options = proc_options_of(tail[2]);
    }
    return options; // the last /proc mount is the one in effect
}

std::optional<std::string> super_options_of_mount(std::string_view mountinfo,
                                                  std::uint64_t mount_id) {
    const std::string id = std::to_string(mount_id) + " ";
    std::size_t start = 0;
    while (start < mountinfo.size()) {
        const std::size_t end = mountinfo.find('\n', start);
        if (end == std::string_view::npos) {
            return std::nullopt; // an incomplete last line
        }
        const std::string_view line = mountinfo.substr(start, end - start);
        if (line.starts_with(id)) {
            const auto dash = line.find(" - ");
            if (dash == std::string_view::npos) {
                return std::nullopt;
            }
            const auto tail = split(line.substr(dash + 3), ' ');
            return tail.size() < 3 ? std::string() : std::string(tail[2]);
        }
        start = end + 1;
    }
    return std::nullopt;
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
