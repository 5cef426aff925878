// SPDX-License-Identifier: Apache-2.0
// The view's node-local /run (run=node): what a fresh one holds and which
// targets get their mount points there. Pure; sys/run_view makes it.
#pragma once

#include "sjail/core/config.hpp"

#include <string>
#include <vector>

namespace sjail {

// One directory the plugin makes in a fresh /run before it is attached.
struct RunDir {
    std::string path; // below /run, absolute
    unsigned mode = 0755;

    bool operator==(const RunDir &) const = default;
};

// What a fresh /run holds before anything is bound below it: /run/lock,
// sticky and writable by all, as Debian has it (/var/lock leads there).
// Mount points of binds below /run are made when they are bound.
const std::vector<RunDir> &node_run_skeleton();

// The size cap of the fresh /run (tmpfs size=): it holds locks, pid files
// and sockets, never data.
inline constexpr const char *kNodeRunSize = "16m";

// True when `target` needs a mount point in the fresh /run (run=node and
// `target` lies below /run): the plugin makes it there, not the jail.
bool in_node_run(RunMode run, const std::string &target);

} // namespace sjail
