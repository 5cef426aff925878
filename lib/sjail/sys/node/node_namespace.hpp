// SPDX-License-Identifier: Apache-2.0
// The node's prepared jail namespace.
//
// Building a jail view means copying the host's whole mount table (unshare),
// which costs milliseconds on nodes with thousands of mounts. So it is done
// once per node, by a builder process (builder.hpp); its mount namespace is
// then kept on STATE/ns next to STATE/stamp, which records everything it was
// built from (node_stamp.hpp). Steps join it with setns, which costs the same
// at any host size, and check that "/" there really is the jail.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/file_id.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/node/kept_namespace.hpp"

#include <string>

namespace sjail {

// Returns the node namespace of the jail `config` resolves to now (on a
// volume with generations, the live one: sys/node/jail_generation.hpp),
// building or rebuilding it (under STATE/lock)
// when it is missing or its stamp no longer matches what it would be built
// from now. Checks the jail's and the state directory's ownership every time,
// except where slurmd's node watch says nothing changed since a step did
// (node_watch.hpp); a step that checked fully arms the watch for the next.
Status acquire_node_namespace(const Config &config, NodeNamespace &out);

// Drops the stamp, so that the next step rebuilds the namespace (used when a
// step found the kept namespace is not the jail).
void forget_node_namespace(const Config &config);

// Drops the node namespace's nsfs bind and the state directory's self-bind
// (slurmd shutdown). Running steps keep their namespace.
Status release_node_namespace(const Config &config);

} // namespace sjail
