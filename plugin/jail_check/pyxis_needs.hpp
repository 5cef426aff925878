// SPDX-License-Identifier: Apache-2.0
// What NVIDIA pyxis (spank_pyxis.so) and the jail's enroot need. Pure: the
// system layer (inspect.cpp) gathers the facts.
//
// pyxis's slurmstepd, as root and in the job's view of the jail (chroot.so's
// line comes first), makes runtime_path/UID and chowns it to the user,
// following symlinks, and accepts a name that exists already. So
// runtime_path must be a node-local directory that only root can write,
// all the way from "/", bound by chroot.so at the same path in the jail:
//
//     required chroot.so jail=/mnt/jail bind=/var/lib/pyxis
//     required spank_pyxis.so runtime_path=/var/lib/pyxis
//
// Anything else either fails every pyxis step (the default /run/pyxis is not
// in the job's view) or hands users root over the jail (a path they can
// write along, or one on the shared jail): problems. enroot runs as the
// user; its settings that put its files on the shared jail, and GPU hooks
// that make GPU containers fail, are warnings. See docs/pyxis.md.
#pragma once

#include "finding.hpp"
#include "sjail/core/config.hpp"
#include "sjail/core/plugstack.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjail::check {

// pyxis's runtime_path when its line sets none.
inline constexpr std::string_view kPyxisDefaultRuntimePath = "/run/pyxis";

// Where the jail's enroot is looked for (pyxis finds it on slurmstepd's PATH).
inline constexpr std::string_view kEnrootConf = "/etc/enroot/enroot.conf";
inline constexpr std::string_view kEnrootStockGpuHook = "/etc/enroot/hooks.d/98-nvidia.sh";
inline constexpr std::string_view kEnrootJailGpuHook =
    "/etc/enroot/hooks.d/50-slurm-jail-nvidia.sh";

// True when the line loads pyxis: spank_pyxis.so or pyxis.so, by name or by
// a path ending in /spank_pyxis.so or /pyxis.so.
bool loads_pyxis(const PluginLine &line);

// The pyxis lines among `plugins`, in order.
std::vector<PluginLine> pyxis_lines(const std::vector<PluginLine> &plugins);

// The value of `key`=... on a pyxis line (the last one wins, as pyxis reads
// its arguments in order); nothing when the line has none.
std::optional<std::string> pyxis_setting(const PluginLine &line, std::string_view key);

// runtime_path= of the line, or pyxis's default /run/pyxis.
std::string pyxis_runtime_path(const PluginLine &line);

// chroot.so's bind= whose target is `target`; nothing when none is.
std::optional<BindSpec> bind_at(const Config &config, const std::string &target);

// Everything wrong with the pyxis lines among `plugins` (Slurm's load order)
// against chroot.so's settings: a pyxis line loaded before chroot.so's,
// container_scope=job, a runtime_path that is no bind= target of chroot.so
// (or a read-only one). Nothing when there is no pyxis line.
std::vector<Finding> pyxis_line_findings(const std::vector<PluginLine> &plugins,
                                         const Config &config);

// One directory on the way to runtime_path's node directory, as lstat(2)
// shows it on the node (no symlink followed).
struct NodeDirEntry {
    std::string path;
    bool exists = true;
    bool symlink = false;
    bool directory = true;
    unsigned uid = 0;
    unsigned mode = 0; // the permission bits (07777)
};

// "/var/lib/pyxis" -> "/", "/var", "/var/lib", "/var/lib/pyxis".
std::vector<std::string> path_and_parents(const std::string &path);

// A problem for the first entry of `way` (from "/" down to the node
// directory that chroot.so binds at `runtime_path`) that is a symlink, not a
// directory, not owned by root or writable by group or others; nothing
// when all pass, or at a missing one (the bind= check reports that).
std::optional<Finding> runtime_dir_finding(const std::string &runtime_path,
                                           const std::vector<NodeDirEntry> &way);

// An enroot.conf text: KEY VALUE lines, blanks around them dropped, '#'
// lines and " #..." ends dropped, a pair of quotes around VALUE removed,
// ${UID} and the like left as written; the first setting of a key wins
// (as enroot reads it).
std::map<std::string, std::string> parse_enroot_conf(std::string_view text);

// True when `path` is /tmp or below it (the job's own /tmp), with no ".."
// component.
bool below_job_tmp(std::string_view path);

// What the jail's enroot has, as found.
struct EnrootFacts {
    std::optional<std::string> conf; // the jail's /etc/enroot/enroot.conf; nothing: missing
    bool stock_gpu_hook = false;     // hooks.d/98-nvidia.sh is there and executable
    bool jail_gpu_hook = false;      // hooks.d/50-slurm-jail-nvidia.sh is there and executable
    bool node_gpu_driver = false;    // chroot.so binds this node's NVIDIA driver into jobs
};

// Warnings for the jail's enroot: ENROOT_RUNTIME_PATH, ENROOT_CACHE_PATH or
// ENROOT_DATA_PATH unset or not below /tmp; enroot's own GPU hook present;
// our GPU hook missing on a node with an NVIDIA driver.
std::vector<Finding> enroot_findings(const std::string &jail, const EnrootFacts &facts);

} // namespace sjail::check
