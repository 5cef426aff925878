// SPDX-License-Identifier: Apache-2.0
// Reading plugstack.conf and every file its include lines name, in the
// order Slurm loads their plugins (core/plugstack.hpp has Slurm's rules).
// The one plugstack.conf reader of pam_slurm_jail and slurm-jail-check.
//
// Stricter than Slurm where Slurm's way would be unsafe or never ends:
//  - every file read must be a regular file owned by root and not writable
//    by group or others, and is opened without following a symlink that
//    sits in a directory a user can write;
//  - includes nest at most kPlugstackMaxDepth files deep, a file that
//    includes itself (directly or not) is an error (Slurm recurses until it
//    fails), and at most kPlugstackMaxFiles files are read in all.
// As in Slurm, a pattern that matches nothing adds nothing, and a directory
// or a vanished file that a pattern matches is read as empty.
#pragma once

#include "sjail/core/plugstack.hpp"
#include "sjail/core/status.hpp"

#include <string>
#include <vector>

namespace sjail {

inline constexpr int kPlugstackMaxDepth = 8;
inline constexpr std::size_t kPlugstackMaxFiles = 256;

struct PlugstackRead {
    std::vector<PluginLine> plugins;         // every plugin line, in Slurm's load order
    std::vector<PlugstackNote> notes;        // lines Slurm ignores, matches read as empty
    std::vector<std::string> files;          // the files read, in order
    std::vector<std::string> empty_includes; // "FILE:LINE: include PATTERN" matching no file
    std::string cause;                       // why reading stopped ("" when every file was read)
    std::string fix;                         // what to do about it

    // The failure as one message ("CAUSE; FIX"), or success.
    [[nodiscard]] Status status() const;
};

// Reads `path` (absolute) and what it includes.
[[nodiscard]] PlugstackRead read_plugstack(const std::string &path);

} // namespace sjail
