// Entering the prepared jail namespace, per step and per task.
#pragma once

#include "builder_report.hpp"
#include "config.hpp"
#include "status.hpp"

#include <sys/types.h>

namespace sjail {

// Moves the calling thread into the node's jail namespace (building it when
// needed) and checks that "/" there is the jail. When the kept namespace
// turns out not to be the jail, its stamp is dropped so the next step
// rebuilds it, and a failure is returned: the caller must leave this view.
Status enter_node_jail(const Config &config);

// Moves the calling thread into the mount namespace `ns_fd` (its root and cwd
// become the namespace's). Works in a multithreaded process: the thread first
// unshares its filesystem attributes (CLONE_FS), then calls setns.
Status enter_namespace(int ns_fd);

// Ok when the calling thread's "/" is the directory `jail`.
Status verify_root(const FileId &jail);

// The inode of the mount namespace the calling thread is in.
Status current_mount_namespace(ino_t &ino);

} // namespace sjail
