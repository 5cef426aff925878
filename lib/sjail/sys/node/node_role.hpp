// SPDX-License-Identifier: Apache-2.0
// Whether this host is a compute node, from its processes (core/node/node_role.hpp
// says what counts as slurmd).
#pragma once

namespace sjail {

// Whether a slurmd of this host runs: a root process whose executable is
// slurmd, in this process's UTS namespace (the hostname slurmd serves).
// Users cannot fake one: /proc/PID/exe names the binary, whatever the
// process calls itself.
bool slurmd_runs_here();

} // namespace sjail
