// SPDX-License-Identifier: Apache-2.0
// Reading plugstack.conf as Slurm's SPANK loader does (src/common/plugstack.c
// of Slurm 22.05): "required|optional PLUGIN [ARG]..." or "include PATTERN",
// '#' starts a comment anywhere, fields are separated by blanks. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjail::check {

struct PluginLine {
    std::string origin; // "FILE:LINE", or "--line"
    bool required = true;
    std::string plugin; // as written: absolute, or looked up in PluginDir
    std::vector<std::string> args;

    bool operator==(const PluginLine &) const = default;
};

struct PlugstackFile {
    std::vector<PluginLine> plugins;
    std::vector<std::string> includes; // glob patterns, made absolute
    std::vector<std::string> errors;   // "FILE:LINE: why" (Slurm ignores such lines)
};

// Parses one file's text; `file` names it in origins and resolves relative includes.
PlugstackFile parse_plugstack(std::string_view text, const std::string &file);

// One line given on the command line. The "required"/"optional" word may be
// left out (then: required). Empty with `error` set when it is not a plugin line.
std::optional<PluginLine> parse_plugin_line(std::string_view line, std::string &error);

// True when the line loads chroot.so (by name or by a path ending in /chroot.so).
bool loads_chroot(const PluginLine &line);

} // namespace sjail::check
