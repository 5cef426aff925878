// SPDX-License-Identifier: Apache-2.0
// The node's jail view: assembled by the builder process, inside its own
// fresh mount namespace. See node_namespace.hpp for how it is kept.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/file_id.hpp"
#include "sjail/core/node/mount_plan.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"

#include <string>
#include <sys/stat.h>
#include <vector>

namespace sjail {

FileId file_id_of(const struct stat &st);

// Turns the calling process's (already unshared, single-threaded) mount
// namespace into the jail view: the jail's system paths checked, the jail
// bound onto itself, the plan mounted through symlink-free fds, then
// pivot_root with the old root detached. `root` receives what "/" is
// afterwards, so the caller can see that the pivot happened.
Status build_jail_view(const Config &config, const std::vector<MountOp> &plan, FileId &root);

// The two steps of build_jail_view, for a builder that adds to the view in
// between (the node's GPU driver, sys/gpu/gpu_view.hpp). assemble_jail_view: checks,
// binds the jail onto itself (`view`: that mount, attached at config.jail)
// and mounts the plan. pivot_into_view: pivot_root into `view`, old root
// detached.
Status assemble_jail_view(const Config &config, const std::vector<MountOp> &plan, Fd &view);
Status pivot_into_view(int view, FileId &root);

// Refuses a jail whose system paths (jail_policy.hpp) are not root-owned or
// are writable by group or others.
Status check_jail_system_paths(int jail_fd, const std::string &jail);

// The same for one path of jail_system_paths(): fine when it is missing.
Status check_jail_system_path(int jail_fd, const std::string &jail, const std::string &path);

// Opens a bind source (bind=, munge=, conf_dir=, spool=, the name
// resolution files) with open_node_path's rule; the message of a missing or
// refused source names it and the fix.
Status open_bind_source(const std::string &source, Fd &out);

} // namespace sjail
