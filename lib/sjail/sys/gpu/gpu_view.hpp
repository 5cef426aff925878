// SPDX-License-Identifier: Apache-2.0
// The node's NVIDIA driver in its jail view (the gpu= settings).
//
// Found in the host namespace, each time a step checks the node namespace's
// stamp: the driver's files and their identities (sys/gpu/nvidia_driver.hpp) and
// the jail's own loader cache join the stamp, so a driver upgrade, or a
// package install that changes the jail's libraries, rebuilds the view.
// Mounted by the builder, after the plan's mounts and before the pivot: a
// read-only tree at /usr/local/nvidia (lib64/, bin/), the daemons' socket
// directories and data files at their own paths, and a node-local
// /etc/ld.so.cache (STATE/ld.so.cache, built by the node's ldconfig over
// the view) that lists the driver first. Nothing is written to the jail.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/gpu/nvidia_driver.hpp"

#include <functional>
#include <string>

namespace sjail {

struct NodeGpu {
    NodeDriver driver; // what was found (nothing with gpu=off, or gpu=auto on a CPU node)
    std::string stamp; // its part of the namespace stamp
};

// Where gpu_driver_root= (or the usual places) and gpu_mps_dir= point, with
// the driver memo the last build left.
DriverSearch driver_search_for(const Config &config);

// STATE/driver-memo: what the node's loader cache listed for the driver when
// the namespace was last built (driver_memo.hpp). Its key, the cache's
// identity, is part of the stamp, so a new cache rebuilds and renews it.
std::string driver_memo_path(const std::string &state_dir);

// Finds the node's driver as `config` asks. An error (gpu=on and none found,
// or a driver that cannot be trusted in any mode) is one line. The jail's
// loader cache identity goes into the stamp, asked of `jail_loader_line`
// only when there is a driver (jail_probe.hpp), else read from the jail.
Status find_node_gpu(const Config &config, NodeGpu &out,
                     const std::function<Status(std::string &)> &jail_loader_line = {});

// In the builder: mounts `driver` into the view (the jail bound onto itself
// at config.jail, `view` its fd), builds STATE/ld.so.cache and binds it
// read-only over the view's /etc/ld.so.cache. Records what was bound in
// STATE/gpu (also when there is no driver, then saying so).
Status mount_node_gpu(const Config &config, int view, const NodeDriver &driver);

} // namespace sjail
