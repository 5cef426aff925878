// SPDX-License-Identifier: Apache-2.0
// Mount options of the /proc filesystems the plugin mounts (the node view's
// and each job's). Pure.
//
// By default the jail's /proc keeps the node's own choice (hidepid=, gid=,
// subset= of the node's /proc); proc= in plugstack.conf overrides it, e.g.
// proc=hidepid=invisible,gid=proc-admins (members of proc-admins see every
// process of the job, as on the node).
#pragma once

#include "status.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sjail {

struct ProcOptions {
    std::string hidepid; // as the kernel takes it: off noaccess invisible ptraceable (or 0 1 2 4)
    std::string gid;     // a group name or number, allowed to see everything
    std::string subset;  // "pid": only the process directories

    bool operator==(const ProcOptions &) const = default;
};

// Reads proc=hidepid=...,gid=...,subset=... (any of them, in any order).
Status parse_proc_setting(std::string_view text, ProcOptions &out);

// The options of the mount at /proc, from /proc/self/mountinfo's text.
ProcOptions node_proc_options(std::string_view mountinfo);

// Key/value pairs for fsconfig, in a fixed order; `gid` already numeric.
std::vector<std::pair<std::string, std::string>> proc_mount_parameters(const ProcOptions &options);

} // namespace sjail
