// SPDX-License-Identifier: Apache-2.0
#include "slurm_conf.hpp"

#include "sjail/core/path_rules.hpp"

#include <algorithm>
#include <cctype>

namespace sjail::check {
namespace {

// The first "Key=Value" of a line; a value may be quoted.
void take_line(std::string_view line, SlurmConf &out) {
    if (const auto hash = line.find('#'); hash != std::string_view::npos) {
        line = line.substr(0, hash);
    }
    line = trim(line);
    if (lower(line.substr(0, 8)) == "include ") {
        out.includes.emplace_back(trim(line.substr(8)));
        return;
    }
    const auto eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) {
        return;
    }
    std::string_view value = line.substr(eq + 1);
    if (value.starts_with('"')) {
        value.remove_prefix(1);
        value = value.substr(0, value.find('"'));
    } else {
        value = value.substr(0, value.find_first_of(" \t"));
    }
    out.values.emplace(lower(trim(line.substr(0, eq))), std::string(value));
}

std::vector<std::string> split_colons(const std::string &text) {
    std::vector<std::string> out;
    for (const auto field : split(text, ':')) {
        if (!field.empty()) {
            out.emplace_back(field);
        }
    }
    return out;
}

} // namespace

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = text.find_last_not_of(" \t\r");
    return text.substr(first, last - first + 1);
}

std::string SlurmConf::get(std::string_view key, std::string_view fallback) const {
    const auto found = values.find(lower(key));
    return found == values.end() || found->second.empty() ? std::string(fallback) : found->second;
}

SlurmConf parse_slurm_conf(std::string_view text) {
    SlurmConf out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        take_line(text.substr(start, end - start), out);
        start = end + 1;
    }
    return out;
}

std::string parent_dir(std::string_view path) {
    const auto slash = path.rfind('/');
    if (slash == std::string_view::npos || slash == 0) {
        return "/";
    }
    return std::string(path.substr(0, slash));
}

SlurmSettings slurm_settings(const SlurmConf &conf, const std::string &conf_path,
                             const std::string &default_plugin_dir) {
    SlurmSettings out;
    out.conf_path = conf_path;
    out.spool_dir = conf.get("SlurmdSpoolDir", "/var/spool/slurmd");
    out.plugin_dirs = split_colons(conf.get("PluginDir", default_plugin_dir));
    out.plugstack = conf.get("PlugStackConfig", parent_dir(conf_path) + "/plugstack.conf");
    out.slurm_user = conf.get("SlurmUser", "root");
    for (const char *key : {"TaskProlog", "TaskEpilog"}) {
        if (auto script = conf.get(key, ""); !script.empty()) {
            out.task_scripts.push_back(std::move(script));
        }
    }
    return out;
}

} // namespace sjail::check
