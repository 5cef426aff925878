// SPDX-License-Identifier: Apache-2.0
// run=node: the jail view's /run is a fresh tmpfs of the node's own, so
// node runtime state (locks, pid files, sockets) is never shared between
// nodes through the shared jail, and the jail needs no mount points below
// /run. Used while the view is assembled (jail_view.hpp), before anyone can
// enter it.
#pragma once

#include "sjail/core/status.hpp"
#include "sjail/sys/safe_open.hpp"

#include <string>

namespace sjail {

// Mounts a new tmpfs (root-owned, mode 0755, nosuid,nodev, kNodeRunSize) on
// the view's /run, hiding the shared jail's /run, with node_run_skeleton()
// made inside it before it is attached.
Status mount_node_run(int view_root);

// Makes the mount point `target` (below /run, absolute in the view) of type
// `type`, and the directories above it, in the fresh /run. Walks only inside
// that tmpfs (never into a bind below it, never through a symlink); what
// exists already is left as it is, for open_mount_target to judge.
Status make_node_run_mount_point(int view_root, const std::string &target, TargetType type);

// Each job's own /run/lock (run=node): the only place in the node's /run
// users may write is a small tmpfs of the job's, mounted over the node's
// /run/lock in the job's views and gone with the job, so no job can fill it
// for another (job/job_creator.cpp).
inline constexpr const char *kJobRunLockSize = "1m";
inline constexpr const char *kJobRunLockInodes = "1024";

} // namespace sjail
