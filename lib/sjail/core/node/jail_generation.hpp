// SPDX-License-Identifier: Apache-2.0
// A jail volume's live generation, as its file .slurm-jail/live names it.
// Pure.
//
// populate-jail builds each version of the jail's system files as a
// generation below the volume (.slurm-jail/generations/N) and makes one live
// by renaming a small file over .slurm-jail/live; the users' data (/home and
// every --preserve path) is one tree on the volume that every generation
// sees. docs/jail-generations.md has the whole layout. A volume without that
// file is a single-directory jail: the volume itself is the jail's root.
#pragma once

#include "sjail/core/status.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjail {

// populate-jail's state directory on the volume, and the live file in it.
inline constexpr std::string_view kJailStateDir = ".slurm-jail";
inline constexpr std::string_view kLiveFile = ".slurm-jail/live";
// The most a live file may hold.
inline constexpr std::size_t kLiveFileMax = 4096;

struct LiveGeneration {
    std::uint64_t generation = 0;          // generations/N: the live one
    std::optional<std::uint64_t> previous; // what a rollback makes live again
    std::vector<std::string> data;         // the users' data paths, /home among them
    bool operator==(const LiveGeneration &) const = default;
};

// The live file's text (`file`: how to name it in a message) as a
// LiveGeneration: `generation=N` exactly once, `previous=N` at most once,
// `data=PATH` once or more with /home among them; '#' starts a comment
// line. A data path is absolute and normalised, not '/', holds only
// letters, digits and "._+-@/", lies neither below another nor on, below or
// above a path root code on the node reads from the jail
// (jail_policy.hpp), nor in .slurm-jail.
Status parse_live_generation(std::string_view file, std::string_view text, LiveGeneration &out);

// What populate-jail writes; parse_live_generation reads it back as it was.
std::string format_live_generation(const LiveGeneration &live);

// A generation number: decimal, 1 or more, no sign or leading zero.
std::optional<std::uint64_t> parse_generation_number(std::string_view text);

// "generations/N" (below .slurm-jail) for generation N.
std::string generation_dir(std::uint64_t generation);

// Whether `path` may be a data path (the rules above); a message naming
// it and the rule it breaks when not.
Status check_data_path(std::string_view path);

// STATE/jail-live, what a node keeps of the live file between steps
// (sys/node/jail_generation.hpp): "at=SECONDS VOLUME" (when a child read the
// live file of VOLUME, on the boot clock), then the file's key (what
// identified it, or "none") and its text.
struct LiveMemo {
    std::int64_t at_s = -1; // -1: no memo, or one that is not as above
    std::string volume;
    std::string key;
    std::string text;
};
LiveMemo parse_live_memo(std::string_view memo);

} // namespace sjail
