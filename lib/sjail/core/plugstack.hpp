// SPDX-License-Identifier: Apache-2.0
// The text of one plugstack.conf file, read as Slurm's SPANK loader reads it
// (src/common/plugstack.c of 22.05, src/common/spank.c of 24.11 and 26.05:
// the rules are the same). Pure: no system calls; sys/plugstack.hpp reads
// the files and follows the include lines.
//
// Slurm's rules:
//  - a line is "required PLUGIN [ARG]...", "optional PLUGIN [ARG]..." or
//    "include PATTERN"; the three words are lower case, exactly;
//  - '#' starts a comment anywhere on a line; words are separated by blanks,
//    tabs and the newline (a carriage return is part of a word);
//  - lines are read 4095 characters at a time: the rest of a longer line is
//    read as a line of its own;
//  - any other line, and a keyword with nothing after it, is ignored;
//  - an include PATTERN that is not absolute is taken relative to the
//    directory of the file that holds the line; the words after PATTERN are
//    ignored; PATTERN is expanded by glob(3) (sorted, no braces, no '~') and
//    each match is read in place, at the include line, with the same rules
//    (includes nest); a pattern that matches nothing adds nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sjail {

// A "required|optional PLUGIN [ARG]..." line.
struct PluginLine {
    std::string origin; // "FILE:LINE", or "--line"
    bool required = true;
    std::string plugin; // as written: absolute, or looked up in PluginDir
    std::vector<std::string> args;

    bool operator==(const PluginLine &) const = default;
};

// An "include PATTERN" line.
struct IncludeLine {
    std::string origin;  // "FILE:LINE"
    std::string pattern; // as Slurm globs it: made absolute against FILE's directory

    bool operator==(const IncludeLine &) const = default;
};

using PlugstackEntry = std::variant<PluginLine, IncludeLine>;

// A line Slurm ignores, or reads otherwise than it looks.
struct PlugstackNote {
    std::string cause; // "FILE:LINE: what Slurm does with it"
    std::string fix;

    bool operator==(const PlugstackNote &) const = default;
};

struct PlugstackText {
    std::vector<PlugstackEntry> entries; // in the file's order
    std::vector<PlugstackNote> notes;
};

// The longest line Slurm reads at once (its fgets buffer, less the NUL).
inline constexpr std::size_t kPlugstackLineMax = 4095;

// Parses one file's text; `file` names it in origins and anchors relative includes.
PlugstackText parse_plugstack(std::string_view text, const std::string &file);

// The pattern Slurm globs for "include PATTERN" in `file`: PATTERN when it is
// absolute, else dirname(FILE)/PATTERN ("." when FILE has no '/').
std::string include_pattern(std::string_view pattern, std::string_view file);

// One line given on a command line. The "required"/"optional" word may be
// left out (then: required). Empty with `error` set when it is not a plugin line.
std::optional<PluginLine> parse_plugin_line(std::string_view line, std::string &error);

// True when the line loads chroot.so (by name or by a path ending in /chroot.so).
bool loads_chroot(const PluginLine &line);

// The chroot.so lines among `plugins`, in order.
std::vector<PluginLine> chroot_lines(const std::vector<PluginLine> &plugins);

} // namespace sjail
