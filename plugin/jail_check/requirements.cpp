// SPDX-License-Identifier: Apache-2.0
#include "requirements.hpp"

#include "sjail/core/node/mount_plan.hpp"
#include "sjail/core/path_rules.hpp"
#include "slurm_conf.hpp"

#include <algorithm>

namespace sjail::check {
namespace {

std::string setting_of(const Config &config, const MountOp &op) {
    if (op.kind == MountKind::FreshRun) {
        return "run=node";
    }
    if (op.kind != MountKind::Bind) {
        return "built in";
    }
    if (op.target == "/tmp") {
        return "tmp=";
    }
    if (op.target == "/etc/hosts" || op.target == "/etc/resolv.conf") {
        return "built in";
    }
    if (op.source == config.munge_dir && op.target == config.munge_dir) {
        return "munge=";
    }
    if (op.source == config.conf_dir && op.target == config.conf_dir) {
        return "conf_dir=";
    }
    if (op.source == config.spool_dir && op.target == config.spool_dir) {
        return "spool=";
    }
    return "bind=";
}

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

std::string in_jail(const std::string &jail, const std::string &path) {
    return jail + path;
}

} // namespace

std::vector<MountPoint> plan_mount_points(const Config &config) {
    std::vector<MountPoint> out;
    for (const auto &op : build_mount_plan(config)) {
        MountPoint point;
        point.target = op.target;
        point.setting = setting_of(config, op);
        point.made_by_plugin = in_node_run(config.run, op.target);
        if (op.kind == MountKind::FreshProc || op.kind == MountKind::FreshRun) {
            point.type = PointType::Directory;
        } else {
            point.type = PointType::LikeSource;
            point.source = op.source;
        }
        out.push_back(std::move(point));
    }
    return out;
}

std::vector<MountPoint> gpu_mount_points(const DriverPlan &plan, const Config &config) {
    std::vector<MountPoint> out;
    out.push_back({plan.tree, PointType::Directory, "", "gpu=", true});
    out.push_back({"/etc/ld.so.cache", PointType::File, "", "gpu=", true});
    for (const auto &bind : plan.binds) {
        if (!bind.in_tree) {
            out.push_back({bind.target, PointType::LikeSource, "", "gpu=", false,
                           in_node_run(config.run, bind.target)});
        }
    }
    return out;
}

std::string mount_point_fix(const std::string &jail, const MountPoint &point,
                            std::string_view message) {
    const std::string path = in_jail(jail, point.target);
    if (contains(message, "is a symlink")) {
        return "replace the symlink in the jail by a real root-owned " +
               std::string(point.type == PointType::File ? "file" : "directory") +
               " (the plugin never follows symlinks inside the jail)";
    }
    if (contains(message, "through a path users control")) {
        return "make every directory above " + path +
               " owned by root and not writable by group or others (chown root:root, chmod go-w)";
    }
    if (contains(message, "but its source is")) {
        return "make " + path + " the same type as its source on the node (rm it, then create it)";
    }
    if (contains(message, "is not a directory")) {
        return "the jail has a file where a directory is expected on the way to " + path +
               "; replace it by a root-owned directory";
    }
    if (point.type == PointType::File) {
        return "create it as a root-owned file: touch " + path + "; chown root:root " + path;
    }
    return "create it as a root-owned directory: mkdir -p " + path + "; chown root:root " + path +
           " (images/jail/finalize-rootfs makes every built-in one)";
}

std::string node_path_fix(const MountPoint &point, std::string_view message) {
    const bool missing = contains(message, "does not exist") || contains(message, "is missing");
    if (point.setting == "munge=") {
        return missing ? "start munged on this node (it makes " + point.source +
                             "), or set munge= to its socket directory"
                       : "make " + point.source +
                             " reachable without a symlink below a "
                             "user-writable directory, or set munge=";
    }
    if (point.setting == "spool=") {
        return "set spool= to slurm.conf's SlurmdSpoolDir (slurmd creates it when it starts)";
    }
    if (point.setting == "conf_dir=") {
        return "set conf_dir= to the directory holding slurm.conf";
    }
    if (point.setting == "bind=") {
        return missing ? "create " + point.source + " on this node, or remove its bind= entry"
                       : "bind the real path instead of one reached through a symlink below a "
                         "directory users can write";
    }
    return missing
               ? "create " + point.source + " on this node"
               : "make the way to " + point.source + " root-owned and closed to group and others";
}

bool bound_by_conf_dir(const Config &config, const std::string &path) {
    return is_same_or_below(path, config.conf_dir);
}

std::vector<Finding> compare_with_slurm_conf(const Config &config, const SlurmSettings &slurm) {
    std::vector<Finding> out;
    if (contains(slurm.spool_dir, "%")) {
        out.push_back(
            {Severity::Warning,
             "slurm.conf's SlurmdSpoolDir " + slurm.spool_dir +
                 " depends on the node (%n/%h); it was not compared with spool=" + config.spool_dir,
             "make sure spool= is this node's SlurmdSpoolDir (one plugstack.conf per "
             "node, or one spool path for all)"});
    } else if (slurm.spool_dir != config.spool_dir) {
        out.push_back({Severity::Problem,
                       "spool=" + config.spool_dir + " but slurm.conf (" + slurm.conf_path +
                           ") has SlurmdSpoolDir=" + slurm.spool_dir +
                           ": batch scripts live there and would be missing inside the jail",
                       "set spool=" + slurm.spool_dir + " in the chroot.so line"});
    }
    if (!bound_by_conf_dir(config, slurm.conf_path)) {
        out.push_back(
            {Severity::Problem,
             "slurm.conf is " + slurm.conf_path + ", outside conf_dir=" + config.conf_dir +
                 ": srun and sbatch inside jobs would not find it in the jail",
             "set conf_dir=" + parent_dir(slurm.conf_path) +
                 " in the chroot.so line (or keep slurm.conf in " + config.conf_dir + ")"});
    }
    return out;
}

std::vector<std::string> plugin_paths(const std::string &plugin,
                                      const std::vector<std::string> &plugin_dirs) {
    if (plugin.starts_with('/')) {
        return {plugin};
    }
    std::vector<std::string> out;
    out.reserve(plugin_dirs.size());
    for (const auto &dir : plugin_dirs) {
        out.push_back((dir.ends_with('/') ? dir : dir + "/") + plugin);
    }
    return out;
}

std::vector<std::string> passwd_names(std::string_view text) {
    std::vector<std::string> names;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        const std::string_view line = text.substr(start, end - start);
        if (const auto colon = line.find(':');
            colon != std::string_view::npos && colon > 0 && !line.starts_with('#')) {
            names.emplace_back(line.substr(0, colon));
        }
        start = end + 1;
    }
    return names;
}

} // namespace sjail::check
