// SPDX-License-Identifier: Apache-2.0
// Helpers for the root-level GPU driver tests: node roots, driver roots and
// small jails under a private tmpfs on /mnt, and a way to run a program
// inside a jail view the way a job would.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpu_sandbox {

// A node's root filesystem at `root`, merged-/usr as on Debian 12: lib ->
// usr/lib, the host's libc in usr/lib/x86_64-linux-gnu, etc/ld.so.conf
// including etc/ld.so.conf.d/x86_64-linux-gnu.conf, and usr/bin.
void make_node_root(const std::string &root);
// The fake driver VERSION installed there the installer's way (libraries in
// usr/lib/x86_64-linux-gnu, nvidia-smi in usr/bin), and root/etc/ld.so.cache
// made by ldconfig.
void install_driver_in_root(const std::string &root, const std::string &version);
// Removes every libcuda*, libnvidia-* and nvidia-smi again.
void remove_driver_from_root(const std::string &root);
void refresh_cache(const std::string &root);

// The container toolkit's layout: DIR/lib64 and DIR/bin.
void make_toolkit_root(const std::string &dir, const std::string &version);

// A jail at `jail` (made by sandbox::make_node) readied for loader tests:
// the host's libc and loader, merged /usr, Debian's ld.so.conf, its own
// ld.so.cache (made by ldconfig over the jail), /var/cache/ldconfig, the
// driver mount point /usr/local/nvidia, /run/nvidia-persistenced, and the
// probes in /usr/local/bin.
void ready_jail(const std::string &jail);

// Everything under `dir` on its file system: type, mode, owner, size,
// inode, mtime, ctime and content (or link target), by path.
std::map<std::string, std::string> snapshot(const std::string &dir);

} // namespace gpu_sandbox
