// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/config.hpp"

#include "sjail/core/digest.hpp"
#include "sjail/core/gpu_driver.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/core/proc_options.hpp"

#include <algorithm>
#include <charconv>
#include <set>

namespace sjail {
namespace {

constexpr std::string_view kHint =
    "; see chroot.so(8) for the settings (jail= bind= munge= conf_dir= spool= tmp= state= "
    "allow_opt_out= build_timeout= recheck= job_tmp= job_tmp_size= job_shm_size= proc= gpu= "
    "gpu_driver_root= gpu_mps_dir= run=)";

constexpr int kMaxBuildTimeout = 3600;

Status parse_bind(std::string_view value, BindSpec &bind) {
    auto fields = split(value, ':');
    if (fields.size() > 1 && fields.back() == "ro") {
        bind.read_only = true;
        fields.pop_back();
    } else if (fields.size() > 1 && fields.back() == "rw") {
        fields.pop_back();
    }
    if (fields.empty() || fields.size() > 2) {
        return Status::failure("bind=" + std::string(value) +
                               " is malformed; write SRC[:DST][:ro]");
    }
    bind.source = fields[0];
    bind.target = fields.size() == 2 ? fields[1] : fields[0];
    if (auto s = check_absolute_path("bind source", bind.source); !s.ok()) {
        return Status::failure("bind=" + std::string(value) + ": " + s.message());
    }
    if (auto s = check_absolute_path("bind target", bind.target); !s.ok()) {
        return Status::failure("bind=" + std::string(value) + ": " + s.message());
    }
    if (bind.target == "/") {
        return Status::failure("bind=" + std::string(value) + ": cannot bind over the jail root");
    }
    return {};
}

// With gpu= on or auto, the plugin mounts the node's driver tree and a
// node-local loader cache; an admin bind may not land there.
Status check_not_driver_view(const Config &config, const std::string &target) {
    const std::string tree = DriverView{}.dir;
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

Status set_once(std::set<std::string> &seen, const std::string &key, std::string &field,
                const std::string &value) {
    if (!seen.insert(key).second) {
        return Status::failure(key + "= is given twice; give it once");
    }
    if (key != "allow_opt_out") {
        if (auto s = check_absolute_path(key, value); !s.ok()) {
            return s;
        }
    }
    field = value;
    return {};
}

Status parse_seconds(const std::string &key, const std::string &value, int &out, int least = 1) {
    int seconds = 0;
    const auto *end = value.data() + value.size();
    auto [ptr, ec] = std::from_chars(value.data(), end, seconds);
    if (value.empty() || ec != std::errc() || ptr != end || seconds < least ||
        seconds > kMaxBuildTimeout) {
        return Status::failure(key + "=" + value + " is not a number of seconds from " +
                               std::to_string(least) + " to " + std::to_string(kMaxBuildTimeout));
    }
    out = seconds;
    return {};
}

// A tmpfs size= value: a number with an optional k, m, g or % suffix.
Status check_size(const std::string &key, const std::string &value) {
    const std::size_t digits = value.find_first_not_of("0123456789");
    const bool suffix_ok =
        digits == std::string::npos ||
        (digits + 1 == value.size() &&
         std::string_view("kKmMgG%").find(value[digits]) != std::string_view::npos);
    if (digits == 0 || value.empty() || !suffix_ok) {
        return Status::failure(key + "=" + value +
                               " is not a size; write a number with an optional k, m, g or % "
                               "suffix (e.g. 20g or 25%)");
    }
    return {};
}

Status parse_job_tmp(const std::string &value, Config &config) {
    if (value == "tmpfs") {
        config.job_tmp = JobTmp::Tmpfs;
        return {};
    }
    if (value == "node") {
        config.job_tmp = JobTmp::Node;
        return {};
    }
    if (auto s = check_absolute_path("job_tmp", value); !s.ok()) {
        return Status::failure(s.message() + " (or give tmpfs or node)");
    }
    config.job_tmp = JobTmp::Directory;
    config.job_tmp_dir = value;
    return {};
}

Status parse_run_mode(const std::string &value, RunMode &out) {
    if (value == "node") {
        out = RunMode::Node;
        return {};
    }
    if (value == "jail") {
        out = RunMode::Jail;
        return {};
    }
    return Status::failure("run=" + value +
                           " is not a mode; write run=node (the default: each node's own "
                           "fresh /run) or run=jail (the shared jail's /run directory)");
}

// Single-valued settings that are not paths.
Status apply_value(Config &config, const std::string &key, const std::string &value) {
    if (key == "build_timeout") {
        return parse_seconds(key, value, config.build_timeout_s);
    }
    if (key == "recheck") {
        return parse_seconds(key, value, config.recheck_s, 0);
    }
    if (key == "job_tmp") {
        return parse_job_tmp(value, config);
    }
    if (key == "gpu") {
        const auto mode = parse_gpu_mode(value);
        if (!mode) {
            return Status::failure("gpu=" + value +
                                   " is not a mode; write gpu=auto (the default), "
                                   "gpu=on or gpu=off");
        }
        config.gpu = *mode;
        return {};
    }
    if (key == "run") {
        return parse_run_mode(value, config.run);
    }
    if (key == "job_tmp_size" || key == "job_shm_size") {
        if (auto s = check_size(key, value); !s.ok()) {
            return s;
        }
        (key == "job_tmp_size" ? config.job_tmp_size : config.job_shm_size) = value;
        return {};
    }
    ProcOptions checked;
    if (auto s = parse_proc_setting(value, checked); !s.ok()) {
        return s;
    }
    config.proc_options = value;
    return {};
}

Status apply(Config &config, std::set<std::string> &seen, const std::string &arg) {
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
        return Status::failure("argument '" + arg + "' is not key=value");
    }
    const std::string key = arg.substr(0, eq);
    const std::string value = arg.substr(eq + 1);
    if (key == "bind") {
        BindSpec bind;
        if (auto s = parse_bind(value, bind); !s.ok()) {
            return s;
        }
        config.binds.push_back(bind);
        return {};
    }
    if (key == "allow_opt_out") {
        std::string list;
        if (auto s = set_once(seen, key, list, value); !s.ok()) {
            return s;
        }
        for (const auto entry : split(list, ',')) {
            if (entry.empty()) {
                return Status::failure("allow_opt_out=" + value + " has an empty entry");
            }
            config.allow_opt_out.emplace_back(entry);
        }
        return {};
    }
    if (key == "gpu_mps_dir") {
        if (auto s = set_once(seen, key, config.gpu_mps_dir, value); !s.ok()) {
            return s;
        }
        if (is_same_or_below(value, "/tmp")) {
            return Status::failure("gpu_mps_dir=" + value +
                                   " lies under /tmp, which jobs see as their node-local /tmp; "
                                   "run nvidia-cuda-mps-control with CUDA_MPS_PIPE_DIRECTORY in a "
                                   "root-owned directory such as /run/nvidia-mps");
        }
        return {};
    }
    for (const char *name : {"build_timeout", "recheck", "job_tmp", "job_tmp_size", "job_shm_size",
                             "proc", "gpu", "run"}) {
        if (key == name) {
            if (!seen.insert(key).second) {
                return Status::failure(key + "= is given twice; give it once");
            }
            return apply_value(config, key, value);
        }
    }
    const std::vector<std::pair<std::string, std::string *>> paths = {
        {"jail", &config.jail},
        {"munge", &config.munge_dir},
        {"conf_dir", &config.conf_dir},
        {"spool", &config.spool_dir},
        {"tmp", &config.tmp_dir},
        {"state", &config.state_dir},
        {"gpu_driver_root", &config.gpu_driver_root}};
    for (const auto &[name, field] : paths) {
        if (key == name) {
            return set_once(seen, key, *field, value);
        }
    }
    return Status::failure("unknown setting '" + key + "'");
}

} // namespace

ParsedConfig parse_config(const std::vector<std::string> &args) {
    ParsedConfig parsed;
    std::set<std::string> seen;
    for (const auto &arg : args) {
        if (auto s = apply(parsed.config, seen, arg); !s.ok()) {
            parsed.status = Status::failure("plugstack.conf: " + s.message() + std::string(kHint));
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

namespace {

// The fingerprint's text, a piece at a time.
template <typename Add> void fingerprint_pieces(const Config &config, Add add) {
    for (const std::string_view piece :
         {std::string_view("v1 jail="), std::string_view(config.jail), std::string_view(" munge="),
          std::string_view(config.munge_dir), std::string_view(" conf_dir="),
          std::string_view(config.conf_dir), std::string_view(" spool="),
          std::string_view(config.spool_dir), std::string_view(" tmp="),
          std::string_view(config.tmp_dir), std::string_view(" proc="),
          std::string_view(config.proc_options)}) {
        add(piece);
    }
    for (const auto &bind : config.binds) {
        for (const std::string_view piece :
             {std::string_view(" bind="), std::string_view(bind.source), std::string_view(":"),
              std::string_view(bind.target), std::string_view(bind.read_only ? ":ro" : "")}) {
            add(piece);
        }
    }
    for (const std::string_view piece :
         {std::string_view(" gpu="), gpu_mode_name(config.gpu),
          std::string_view(" gpu_driver_root="), std::string_view(config.gpu_driver_root),
          std::string_view(" gpu_mps_dir="), std::string_view(config.gpu_mps_dir),
          std::string_view(" run="), run_mode_name(config.run)}) {
        add(piece);
    }
}

} // namespace

std::string fingerprint(const Config &config) {
    std::string out;
    fingerprint_pieces(config, [&out](std::string_view piece) { out += piece; });
    return out;
}

std::string fingerprint_digest(const Config &config) {
    Digest digest;
    fingerprint_pieces(config, [&digest](std::string_view piece) { digest.add(piece); });
    return digest.hex();
}

std::string_view run_mode_name(RunMode mode) {
    return mode == RunMode::Node ? "node" : "jail";
}

bool opt_out_allowed(const Config &config, std::string_view user, unsigned uid) {
    const std::string uid_text = std::to_string(uid);
    return std::any_of(config.allow_opt_out.begin(), config.allow_opt_out.end(),
                       [&](const std::string &entry) {
                           return entry == uid_text || (!user.empty() && entry == user);
                       });
}

} // namespace sjail
