// SPDX-License-Identifier: Apache-2.0
// The root-level tests' node: a private mount namespace and a small jail
// built from scratch, on the test kit (tests/kit) that the benchmarks share.
#pragma once

#include "kit/child.hpp"
#include "kit/files.hpp"
#include "kit/node.hpp"
#include "sjail/core/config.hpp"

#include <string>

namespace sandbox {

// In the current (child) process: a private mount namespace, a slave of the
// host's, with a tmpfs on /mnt; under it a jail and node-local directories:
//   /mnt/jail         the jail, with /etc/slurm-jail-release ("JAIL"), the
//                     mount points of the plugin's mount plan, and /home
//   /mnt/node/...     munge, conf, spool, tmp and data (a file "hello" = "hi")
//   /mnt/host-only    a file that only the host view has
// `config` is set to use them, with bind=/mnt/node/data:/opt/data:ro.
std::string make_node(sjail::Config &config);

// Same layout below `base` (an existing root-owned directory), without
// namespaces, for tests that watch the host's mount table.
std::string make_layout(const std::string &base, sjail::Config &config);

} // namespace sandbox
