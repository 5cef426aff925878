// SPDX-License-Identifier: Apache-2.0
// The list of mounts that make a node's jail view, derived from the config. Pure.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/proc_options.hpp"

#include <string>
#include <vector>

namespace sjail {

enum class MountKind {
    FreshProc,     // a new procfs instance, nosuid,nodev,noexec
    Bind,          // bind mount of one host directory or file
    RecursiveBind, // bind mount of a host tree with everything mounted below it
    FreshRun,      // run=node: a new tmpfs on /run holding node_run_skeleton()
};

// One directory the plugin makes in a fresh /run before it is attached.
struct RunDir {
    std::string path; // below /run, absolute
    unsigned mode = 0755;

    bool operator==(const RunDir &) const = default;
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

// What a fresh /run holds before anything is bound below it: /run/lock,
// sticky and writable by all, as Debian has it (/var/lock leads there).
// Mount points of binds below /run are made when they are bound.
const std::vector<RunDir> &node_run_skeleton();

// The size cap of the fresh /run (tmpfs size=): it holds locks, pid files
// and sockets, never data.
inline constexpr const char *kNodeRunSize = "16m";

// True when `target` needs a mount point in the fresh /run (run=node and
// `target` lies below /run): the plugin makes it there, not the jail.
bool in_node_run(const Config &config, const std::string &target);

// Mounts in the order they must be made: kernel filesystems, the node's /run
// (run=node), node-local directories, then admin binds sorted so that a
// parent target comes before anything mounted below it.
// `proc` is applied to the fresh /proc (its gid already numeric).
std::vector<MountOp> build_mount_plan(const Config &config, const ProcOptions &proc = {});

} // namespace sjail
