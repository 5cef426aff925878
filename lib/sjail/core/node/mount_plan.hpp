// SPDX-License-Identifier: Apache-2.0
// The list of mounts that make a node's jail view, derived from the config. Pure.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/proc_options.hpp"
#include "sjail/core/run_view.hpp"

#include <string>
#include <vector>

namespace sjail {

enum class MountKind {
    FreshProc,     // a new procfs instance, nosuid,nodev,noexec
    Bind,          // bind mount of one host directory or file
    RecursiveBind, // bind mount of a host tree with everything mounted below it
    FreshRun,      // run=node: a new tmpfs on /run holding node_run_skeleton()
};

struct MountOp {
    MountKind kind = MountKind::Bind;
    std::string source; // host path (empty for FreshProc)
    std::string target; // absolute path as seen inside the jail
    bool read_only = false;
    bool nosuid_nodev = false; // for user-writable scratch such as /tmp
    ProcOptions proc;          // FreshProc: hidepid=, gid= (numeric), subset=

    bool operator==(const MountOp &) const = default;
};

// Mounts in the order they must be made: kernel filesystems, the node's /run
// (run=node), node-local directories, then admin binds sorted so that a
// parent target comes before anything mounted below it.
// `proc` is applied to the fresh /proc (its gid already numeric).
std::vector<MountOp> build_mount_plan(const Config &config, const ProcOptions &proc = {});

} // namespace sjail
