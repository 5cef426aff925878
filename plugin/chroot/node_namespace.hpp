// The node's prepared jail namespace.
//
// Building a jail view means copying the host's whole mount table (unshare),
// which costs milliseconds on nodes with thousands of mounts. So it is done
// once per node: a builder process unshares, mounts the plan and pivots into
// the jail; its mount namespace is then kept alive on a bind-mounted nsfs
// file, STATE/ns, next to STATE/stamp, which records what it was built from.
// Steps join it with setns, which costs the same at any host size.
#pragma once

#include "config.hpp"
#include "fd.hpp"
#include "mount_plan.hpp"
#include "status.hpp"

#include <string>
#include <sys/types.h>

namespace sjail {

// Turns the calling process's (already unshared, single-threaded) mount
// namespace into the jail view: the jail bound onto itself, the plan mounted
// through symlink-free fds, then pivot_root with the old root detached.
Status build_jail_view(const Config &config, const std::vector<MountOp> &plan);

// What STATE/stamp must say for a namespace built from `config` over a jail
// directory with this device and inode.
std::string namespace_stamp(const Config &config, dev_t jail_dev, ino_t jail_ino);

// Returns an fd of the node namespace, building or rebuilding it (under
// STATE/lock) when it is missing or its stamp no longer matches the config
// and the jail. Checks the jail's ownership on every call.
Status acquire_node_namespace(const Config &config, Fd &ns_fd);

// Drops the node namespace's nsfs bind and the state directory's self-bind
// (slurmd shutdown). Running steps keep their namespace.
Status release_node_namespace(const Config &config);

} // namespace sjail
