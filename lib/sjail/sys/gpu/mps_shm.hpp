// SPDX-License-Identifier: Apache-2.0
#pragma once
// gpu_mps_shm=DIR: the /dev/shm of the node-wide MPS daemon (a tmpfs the
// daemon runs with over its own /dev/shm, as NVIDIA's device plugin keeps
// /run/nvidia/mps/shm). The MPS server and its clients share memory through
// files there, by name, so a job whose clients are to reach the server has
// DIR as its /dev/shm.

#include "sjail/core/config.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"

namespace sjail {

// Opens DIR (O_PATH) when gpu_mps_shm= is set, gpu= is not off and DIR
// exists on the node: the directories above it root-owned and closed to
// group and others, DIR itself root's, and sticky when others may write it.
// `out` stays invalid when it does not apply or DIR is missing (no MPS
// daemon on this node): the job then has a /dev/shm of its own.
Status open_mps_shm(const Config &config, Fd &out);

// What to do when open_mps_shm fails.
inline constexpr const char *kMpsShmFix =
    "make it a root-owned directory (a tmpfs, sticky when users write it) below root-owned "
    "directories closed to group and others, or unset gpu_mps_shm=";

} // namespace sjail
