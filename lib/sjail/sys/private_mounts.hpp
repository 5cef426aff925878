// SPDX-License-Identifier: Apache-2.0
// The places of a job or a session that are its own in its view: a fresh
// tmpfs (or a detached tree) attached over /tmp, /dev/shm or /run/lock of the
// current mount namespace, through no symlink.
#pragma once

#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"

#include <string>

namespace sjail {

// An O_PATH fd of the directory `path` in the current view, through no symlink.
Status open_mount_point(const char *path, Fd &out);

// Attaches the detached mount `mnt` over `target` (of the current view).
Status attach_mount(int mnt, const char *target);

// A new tmpfs (mode 1777, nosuid, nodev; `size` and `inodes` when not empty)
// over `target`.
Status mount_private_tmpfs(const std::string &size, const char *target,
                           const char *inodes = nullptr);

// var_tmp=job: the mount at /tmp of the current view bound again at
// /var/tmp, so that /var/tmp is the job's (or session's) /tmp: the same
// files, size limit and lifetime, never the shared jail's directory. A jail
// without /var/tmp gets none.
Status share_tmp_as_var_tmp();

} // namespace sjail
