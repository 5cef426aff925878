// SPDX-License-Identifier: Apache-2.0
// Mounting the node's NVIDIA driver (nvidia_driver.hpp) into a jail view.
#pragma once

#include "sjail/core/gpu/nvidia_driver.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/gpu/nvidia_driver.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace sjail {

// In the caller's (builder's, private) mount namespace: mounts a fresh
// read-only tmpfs on plan.tree inside the view rooted at `view_root`, binds
// the driver's libraries and binaries into it read-only with their soname
// links beside them, then binds IPC directories and data files at their
// own paths. Those are optional: a bind outside the tree whose mount point
// the jail lacks, or has as a symlink (never followed), as the wrong kind or
// not as root's, is skipped, its note appended to `notes` and its index in
// plan.binds to `skipped`. Only the tree itself can fail the view. Nothing
// is written to the jail.
// `driver` may come from the namespace the builder was forked from (to
// compute the stamp before deciding to build): its fds cannot be cloned
// after the builder's unshare, so each file is then opened again by path,
// with the same checks, and must have the identity discovery recorded.
Status mount_driver_view(int view_root, const DriverPlan &plan, const NodeDriver &driver,
                         std::vector<std::string> &notes, std::vector<std::size_t> &skipped);

} // namespace sjail
