// SPDX-License-Identifier: Apache-2.0
// What a node and a jail need for one chroot.so line, derived from the
// plugin's own config and mount plan, and the fixes for what is missing.
// Pure: the system layer (inspect.hpp) looks at the node and the jail.
#pragma once

#include "finding.hpp"
#include "sjail/core/config.hpp"
#include "sjail/core/gpu/nvidia_driver.hpp"
#include "slurm_conf.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sjail::check {

enum class PointType {
    Directory,
    File,
    LikeSource, // whatever the node path bound there is (the plugin's own rule)
};

// One mount point the plugin opens inside the jail.
struct MountPoint {
    std::string target; // absolute, inside the jail
    PointType type = PointType::Directory;
    std::string source;          // node path bound there ("" for /proc and the GPU tree)
    std::string setting;         // where it comes from: "munge=", "bind=", "built in", "gpu="
    bool required = true;        // false: the plugin skips it with a note when missing
    bool made_by_plugin = false; // below the node's own /run (run=node): not in the jail

    bool operator==(const MountPoint &) const = default;
};

// The mount points of the plugin's mount plan (build_mount_plan), in its order.
// With run=node, /run itself must be a directory in the jail; the plugin makes
// the mount points below it in the node's own /run.
std::vector<MountPoint> plan_mount_points(const Config &config);

// The mount points the node's NVIDIA driver needs (plan_driver_view's result):
// the tree and the loader cache (required), the daemons' socket directories
// and data files (skipped by the plugin when the jail has no mount point).
// With run=node, those below /run are made by the plugin in the node's /run.
std::vector<MountPoint> gpu_mount_points(const DriverPlan &plan, const Config &config);

// The fix for a mount point that open_mount_target refused with `message`.
std::string mount_point_fix(const std::string &jail, const MountPoint &point,
                            std::string_view message);

// The fix for a node path (bind source) that the plugin cannot open.
std::string node_path_fix(const MountPoint &point, std::string_view message);

// chroot.so's settings against slurm.conf: spool= and SlurmdSpoolDir,
// conf_dir= and where slurm.conf is.
std::vector<Finding> compare_with_slurm_conf(const Config &config, const SlurmSettings &slurm);

// True when `path` (a node file jobs need, e.g. plugstack.conf) is inside
// conf_dir=, which the plugin binds into the jail at the same path.
bool bound_by_conf_dir(const Config &config, const std::string &path);

// Where srun and sbatch inside the jail look for the plugin: `plugin` itself
// when absolute, else PLUGINDIR/plugin for each directory of PluginDir.
std::vector<std::string> plugin_paths(const std::string &plugin,
                                      const std::vector<std::string> &plugin_dirs);

// The user names of an /etc/passwd text.
std::vector<std::string> passwd_names(std::string_view text);

} // namespace sjail::check
