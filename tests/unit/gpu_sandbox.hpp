// SPDX-License-Identifier: Apache-2.0
// Helpers for the root-level GPU driver tests: node roots, driver roots and
// small jails under a private tmpfs on /mnt, and a way to run a program
// inside a jail view the way a job would. The node and the jail are of the
// build's architecture: its multiarch directory (MULTIARCH below:
// x86_64-linux-gnu, or aarch64-linux-gnu on an arm64 build), its loader
// (ld-linux-x86-64.so.2 in /lib64, or ld-linux-aarch64.so.1 in /lib) and its
// ldconfig, so on an arm64 build they describe an arm64 (Grace) node.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpu_sandbox {

// A node's root filesystem at `root`, merged-/usr as on Debian 12: lib ->
// usr/lib, the host's libc in usr/lib/MULTIARCH, etc/ld.so.conf including
// etc/ld.so.conf.d/MULTIARCH.conf, and usr/bin.
void make_node_root(const std::string &root);
// The fake driver VERSION installed there the installer's way (libraries in
// usr/lib/MULTIARCH, nvidia-smi in usr/bin), and root/etc/ld.so.cache made
// by ldconfig.
void install_driver_in_root(const std::string &root, const std::string &version);
// Removes every libcuda*, libnvidia-* and nvidia-smi again.
void remove_driver_from_root(const std::string &root);
void refresh_cache(const std::string &root);

// The container toolkit's layout: DIR/lib64 and DIR/bin.
void make_toolkit_root(const std::string &dir, const std::string &version);

// A jail at `jail` (made by sandbox::make_node) readied for loader tests:
// the host's libc and loader (and the loader's link where programs ask for
// it), merged /usr, Debian's ld.so.conf, its own
// ld.so.cache (made by ldconfig over the jail), /var/cache/ldconfig, the
// driver mount point /usr/local/nvidia, /run/nvidia-persistenced, and the
// probes in /usr/local/bin.
void ready_jail(const std::string &jail);

// Everything under `dir` on its file system: type, mode, owner, size,
// inode, mtime, ctime and content (or link target), by path.
std::map<std::string, std::string> snapshot(const std::string &dir);

} // namespace gpu_sandbox
