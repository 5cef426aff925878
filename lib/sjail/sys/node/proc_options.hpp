// SPDX-License-Identifier: Apache-2.0
// The options of the /proc filesystems the plugin mounts (the node view's
// and each job's), as resolved on the node. See proc_options.hpp.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/proc_options.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"

#include <string>

namespace sjail {

// proc= with its group resolved on the node, or the node's own /proc options.
Status resolve_proc_options(const Config &config, ProcOptions &out);

// The super options of the mount in effect at the node's /proc, from
// /proc/self/mountinfo read only up to that mount's line (found by its id):
// the node's /proc is among its first mounts, so this costs about the same
// on a node with thousands of mounts. Part of the node namespace's stamp
// when proc= is not set.
Status node_proc_super_options(std::string &out);

// What the node namespace's build resolved (STATE/proc-options), so a job
// does not read the host's whole mount table; resolved now if missing.
Status load_proc_options(const Config &config, ProcOptions &out);
Status save_proc_options(const std::string &state_dir, const ProcOptions &options);

// A new proc filesystem of the PID namespace the caller is in, with
// `options`, as a detached nosuid, nodev, noexec mount.
[[nodiscard]] Status make_proc_mount(const ProcOptions &options, Fd &out);

} // namespace sjail
