// SPDX-License-Identifier: Apache-2.0
// Mount options of the /proc filesystems the plugin mounts (the node view's
// and each job's). Pure.
//
// By default the jail's /proc keeps the node's own choice (hidepid=, gid=,
// subset= of the node's /proc); proc= in plugstack.conf overrides it, e.g.
// proc=hidepid=invisible,gid=proc-admins (members of proc-admins see every
// process of the job, as on the node).
#pragma once

#include "sjail/core/status.hpp"

#include <cstdint>
#include <optional>
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

// The super options (the last field) of the mount whose id (the first field)
// is `mount_id`, from the beginning of /proc/self/mountinfo's text; nothing
// while its line is not complete in `mountinfo`.
std::optional<std::string> super_options_of_mount(std::string_view mountinfo,
                                                  std::uint64_t mount_id);

// hidepid=, gid= and subset= of a /proc mount's super options.
ProcOptions proc_options_of(std::string_view super_options);

// Key/value pairs for fsconfig, in a fixed order; `gid` already numeric.
std::vector<std::pair<std::string, std::string>> proc_mount_parameters(const ProcOptions &options);

} // namespace sjail
