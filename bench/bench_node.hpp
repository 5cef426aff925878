// SPDX-License-Identifier: Apache-2.0
// The benchmark node's set-up (bench_env.hpp): in its private mount
// namespace, the node's directories, a small jail, the host mounts that
// bring its mount table to the size asked for, and one prepared node jail
// namespace per admin-bind count.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/node/mount_plan.hpp"
#include "sjail/sys/node/node_watch.hpp"

#include <string>
#include <vector>

namespace bench {

// One prepared configuration of the node: a plugstack.conf line with
// `binds` admin binds, parsed, and its mount plan.
struct JailConfig {
    int binds = 0;
    std::vector<std::string> args; // the plugstack.conf line's arguments
    sjail::Config config;
    std::vector<sjail::MountOp> plan;
    sjail::NodeWatch watch; // what slurmd holds (node_watch.hpp), held by the node process
};

// Sets the node up in the calling process (which must be the node process:
// it leaves the host's mount namespace). `actual` receives the mount-table
// size reached; `no_watch` why the node watch is off ("" when it is on).
std::string setup_node(int host_mounts, const std::vector<int> &binds, std::vector<JailConfig> &out,
                       int &actual, std::string &no_watch);

// Checks, outside the timed part, that the calling process sees the jail.
std::string check_inside_jail();

} // namespace bench
