// SPDX-License-Identifier: Apache-2.0
// The few slurm.conf settings that chroot.so's settings must agree with. Pure.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sjail::check {

// "Key=Value" lines; keys are case-insensitive, '#' starts a comment, only
// the first pair of a line counts (node and partition lines carry more).
struct SlurmConf {
    std::map<std::string, std::string> values; // lower-case key -> value
    std::vector<std::string> includes;         // Include lines (not followed)

    [[nodiscard]] std::string get(std::string_view key, std::string_view fallback) const;
};

SlurmConf parse_slurm_conf(std::string_view text);

// What the check needs from slurm.conf, Slurm's defaults filled in.
struct SlurmSettings {
    std::string conf_path;                 // where slurm.conf is
    std::string spool_dir;                 // SlurmdSpoolDir (/var/spool/slurmd)
    std::vector<std::string> plugin_dirs;  // PluginDir, split at ':'
    std::string plugstack;                 // PlugStackConfig (slurm.conf's dir/plugstack.conf)
    std::string slurm_user;                // SlurmUser (root)
    std::vector<std::string> task_scripts; // TaskProlog, TaskEpilog when set
};

SlurmSettings slurm_settings(const SlurmConf &conf, const std::string &conf_path,
                             const std::string &default_plugin_dir);

// ASCII lower case, as slurm.conf's keys compare.
std::string lower(std::string_view text);

// Without the blanks (space, tab, CR) around it.
std::string_view trim(std::string_view text);

// The directory part of an absolute path ("/etc/slurm/x" -> "/etc/slurm", "/x" -> "/").
std::string parent_dir(std::string_view path);

} // namespace sjail::check
