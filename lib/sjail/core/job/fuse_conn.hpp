// SPDX-License-Identifier: Apache-2.0
// What the job's init reads to free a job that cannot die: the FUSE
// connections in a process's mount table, and whether a process is dying
// but stuck (a FUSE request nobody answers). Pure.
#pragma once

#include <cstdint>
#include <set>
#include <string_view>

namespace sjail {

// The FUSE connections (their names in the fusectl filesystem, the device
// number of the superblock as the kernel encodes it: major << 20 | minor)
// of the FUSE mounts (types fuse, fuseblk, fuse.*) in a mountinfo text.
std::set<std::uint64_t> fuse_connections_of_mountinfo(std::string_view mountinfo);

// True when /proc/PID/status says the process was sent SIGKILL and has not
// died of it: in uninterruptible sleep (D), or a leader gone ahead (Z)
// while SIGKILL is still pending for its threads.
bool is_stuck_dying(std::string_view status);

} // namespace sjail
