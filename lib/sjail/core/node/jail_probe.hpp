// SPDX-License-Identifier: Apache-2.0
// When a node last asked the jail's filesystem itself. Pure.
//
// A step's checks otherwise use only what the node's kernel already knows
// (mount IDs, its lookup and attribute caches, node-local files), so they
// make no round trip to the shared filesystem. Whether its server answers
// at all only the server can say: a probe asks, at most once every
// recheck= seconds per node, and STATE/jail-probe keeps when it answered.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sjail {

struct JailProbeMemo {
    std::int64_t at_s = 0; // when the probe answered (CLOCK_BOOTTIME seconds)
    bool operator==(const JailProbeMemo &) const = default;
};

std::string format_probe_memo(const JailProbeMemo &memo);

// nullopt for anything but what format_probe_memo wrote.
std::optional<JailProbeMemo> parse_probe_memo(std::string_view text);

// True when a step must ask the jail's filesystem again: no memo, recheck=0,
// a memo from the future (a clock that went back) or older than recheck_s.
bool probe_due(const std::optional<JailProbeMemo> &memo, std::int64_t now_s, int recheck_s);

// The filesystem of mount `mount_id`, as /proc/self/mountinfo names it:
// "TYPE SOURCE mounted at MOUNTPOINT"; nullopt when no line has that id.
std::optional<std::string> describe_mount(std::string_view mountinfo, std::uint64_t mount_id);

} // namespace sjail
