// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/parse_config.hpp"

#include "sjail/core/gpu_mode.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/core/settings.hpp"

#include <set>

namespace sjail {
namespace {

// "; see chroot.so(8) for the settings (jail= bind= ... run=)": every key, as
// the settings table lists them.
std::string settings_hint() {
    std::string hint = "; see chroot.so(8) for the settings (";
    for (const auto &setting : settings()) {
        hint += setting.name;
        hint += "= ";
    }
    hint.back() = ')';
    return hint;
}

// With gpu= on or auto, the plugin mounts the node's driver tree and a
// node-local loader cache; an admin bind may not land there.
Status check_not_driver_view(const Config &config, const std::string &target) {
    const std::string tree(kDriverViewDir);
    if (config.gpu != GpuMode::Off &&
        (is_same_or_below(target, tree) || target == "/etc/ld.so.cache" ||
         target == config.gpu_mps_dir)) {
        return Status::failure("bind target " + target +
                               " is where gpu= binds the node's NVIDIA driver (" + tree +
                               ", /etc/ld.so.cache, gpu_mps_dir=); to bind a driver yourself, "
                               "set gpu=off");
    }
    return {};
}

// With run=node the plugin mounts /run itself; a bind may land below it, not on it.
Status check_not_run(const Config &config, const std::string &target, const std::string &what) {
    if (config.run == RunMode::Node && target == "/run") {
        return Status::failure(what + " /run is where run=node mounts the node's own /run; bind "
                                      "below it (such as /run/NAME), or set run=jail");
    }
    return {};
}

// Targets that the plugin mounts itself; admin binds may not land on or under
// the kernel filesystems, nor exactly on another builtin target.
Status check_targets(const Config &config) {
    const std::vector<std::string> kernel = {"/proc", "/dev", "/sys"};
    const std::vector<std::string> builtin = {"/proc",          "/dev",          "/sys",
                                              "/tmp",           "/etc/hosts",    "/etc/resolv.conf",
                                              config.munge_dir, config.conf_dir, config.spool_dir};
    std::set<std::string> taken(builtin.begin(), builtin.end());
    if (taken.size() != builtin.size()) {
        return Status::failure("munge=, conf_dir= and spool= must be different paths, none of "
                               "them /proc, /dev, /sys, /tmp, /etc/hosts or /etc/resolv.conf");
    }
    for (const auto &node_path : {config.munge_dir, config.conf_dir, config.spool_dir}) {
        if (auto s = check_not_run(config, node_path, "the node path"); !s.ok()) {
            return s;
        }
        for (const auto &k : kernel) {
            if (is_same_or_below(node_path, k)) {
                std::string message = node_path;
                message += " lies under " + k + ", which the plugin mounts from the host itself";
                return Status::failure(message);
            }
        }
    }
    if (config.gpu != GpuMode::Off) {
        if (auto s = check_not_run(config, config.gpu_mps_dir, "gpu_mps_dir="); !s.ok()) {
            return s;
        }
    }
    for (const auto &bind : config.binds) {
        for (const auto &k : kernel) {
            if (is_same_or_below(bind.target, k)) {
                return Status::failure("bind target " + bind.target + " lies under " + k +
                                       ", which is already bound from the host as a whole");
            }
        }
        if (auto s = check_not_run(config, bind.target, "bind target"); !s.ok()) {
            return s;
        }
        if (!taken.insert(bind.target).second) {
            return Status::failure("bind target " + bind.target +
                                   " is used twice; give each bind its own target");
        }
        if (auto s = check_not_driver_view(config, bind.target); !s.ok()) {
            return s;
        }
    }
    return {};
}

Status apply(Config &config, std::set<std::string> &seen, const std::string &arg) {
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
        return Status::failure("argument '" + arg + "' is not key=value");
    }
    const std::string key = arg.substr(0, eq);
    const Setting *setting = find_setting(key);
    if (setting == nullptr) {
        return Status::failure("unknown setting '" + key + "'");
    }
    if (!setting->repeatable && !seen.insert(key).second) {
        return Status::failure(key + "= is given twice; give it once");
    }
    return setting->apply(config, setting->name, arg.substr(eq + 1));
}

} // namespace

ParsedConfig parse_config(const std::vector<std::string> &args) {
    ParsedConfig parsed;
    std::set<std::string> seen;
    for (const auto &arg : args) {
        if (auto s = apply(parsed.config, seen, arg); !s.ok()) {
            parsed.status = Status::failure("plugstack.conf: " + s.message() + settings_hint());
            return parsed;
        }
    }
    if (parsed.config.jail.empty()) {
        parsed.status = Status::failure(
            "plugstack.conf: jail= is missing; add jail=/path/to/jail to the chroot.so line");
        return parsed;
    }
    if (parsed.config.jail == "/") {
        parsed.status = Status::failure("plugstack.conf: jail=/ would jail tasks into the host; "
                                        "give the jail's own directory");
        return parsed;
    }
    if (auto s = check_targets(parsed.config); !s.ok()) {
        parsed.status = Status::failure("plugstack.conf: " + s.message());
    }
    return parsed;
}

} // namespace sjail
