// SPDX-License-Identifier: Apache-2.0
// The state directory (state=, default /run/slurm-jail) that keeps the
// node's jail namespace between steps:
//   STATE/ns        the namespace, kept alive on a bind-mounted nsfs file
//   STATE/stamp     what it was built from (node_stamp.hpp)
//   STATE/lock      flock: shared to join, exclusive to rebuild
//   STATE/self-bind marker: STATE was bound onto itself by the plugin
// The directory must be root-owned and closed to group and others; every
// file in it is opened without following symlinks and must be a regular file
// (a FIFO planted there would block every step).
#pragma once

#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"

#include <string>

namespace sjail {

// Creates STATE (0700) if missing; refuses one that users could write.
Status prepare_state_dir(const std::string &state);

// Takes STATE/lock with flock(how), waiting through signals.
Status lock_state(const std::string &state, Fd &lock, int how);

// Opens STATE/ns when it holds a mount namespace (nsfs); else leaves `out` empty.
void open_kept_namespace(const std::string &state, Fd &out);

// Opens `path` when a namespace is bound there (nsfs); else leaves `out` empty.
void open_namespace_file(const std::string &path, Fd &out);

// Creates `path` as an empty regular file (a mount point for a namespace),
// after dropping any namespace bound there before.
Status reset_mount_point_file(const std::string &path);

// Makes STATE a private mount of its own, so the nsfs bind below it never
// propagates into other namespaces (which would pin them).
Status make_private_mount(const std::string &state);

// Creates the empty file STATE/ns to bind a namespace on, and drops any
// namespace bound there before.
Status reset_namespace_file(const std::string &state);

} // namespace sjail
