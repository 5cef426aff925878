// SPDX-License-Identifier: Apache-2.0
// The options of the /proc filesystems the plugin mounts (the node view's
// and each job's), as resolved on the node. See proc_options.hpp.
#pragma once

#include "config.hpp"
#include "proc_options.hpp"
#include "status.hpp"

namespace sjail {

// proc= with its group resolved on the node, or the node's own /proc options.
Status resolve_proc_options(const Config &config, ProcOptions &out);

// What the node namespace's build resolved (STATE/proc-options), so a job
// does not read the host's whole mount table; resolved now if missing.
Status load_proc_options(const Config &config, ProcOptions &out);
Status save_proc_options(const Config &config, const ProcOptions &options);

} // namespace sjail
