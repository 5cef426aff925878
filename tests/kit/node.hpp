// SPDX-License-Identifier: Apache-2.0
// A sandbox "node": the calling (forked) process gets its own mount namespace
// with a fresh tmpfs on /mnt, so nothing it mounts reaches the host.
#pragma once

#include <string>
#include <vector>

namespace kit {

enum class HostMounts {
    Slave,   // the host's later mounts still show up here
    Private, // nothing the host mounts meanwhile changes this namespace
};

// unshare(CLONE_NEWNS), / made recursively slave or private, then a tmpfs
// (mode 0755, `source` as its name in mountinfo) on /mnt.
std::string private_node_namespace(const std::string &source, HostMounts host);

// In a private mount namespace: a copy of the host's /etc at `copy` (a new
// directory), bound on /etc, so that what the host changes in its /etc
// meanwhile (useradd renaming /etc/passwd+ into place) no longer reaches
// this namespace's /etc, nor an inotify watch on it.
std::string own_etc_copy(const std::string &copy);

// Mount points (field 5 of /proc/self/mountinfo), in mountinfo's order.
std::vector<std::string> mount_points();

// Those at or below `prefix`.
std::vector<std::string> mounts_below(const std::string &prefix);

} // namespace kit
