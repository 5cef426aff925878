// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/settings.hpp"

#include "sjail/core/config.hpp"
#include "sjail/core/gpu_mode.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/core/proc_options.hpp"
#include "sjail/core/whole_number.hpp"

#include <algorithm>
#include <array>

namespace sjail {
namespace {

Status set_path(std::string_view key, std::string &field, const std::string &value) {
    if (auto s = check_absolute_path(key, value); !s.ok()) {
        return s;
    }
    field = value;
    return {};
}

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

Status apply_bind(Config &config, std::string_view /*key*/, const std::string &value) {
    BindSpec bind;
    if (auto s = parse_bind(value, bind); !s.ok()) {
        return s;
    }
    config.binds.push_back(bind);
    return {};
}

Status apply_opt_out(Config &config, std::string_view /*key*/, const std::string &value) {
    for (const auto entry : split(value, ',')) {
        if (entry.empty()) {
            return Status::failure("allow_opt_out=" + value + " has an empty entry");
        }
        config.allow_opt_out.emplace_back(entry);
    }
    return {};
}

Status parse_seconds(std::string_view key, const std::string &value, int &out, int least) {
    const auto seconds = whole_number<int>(value);
    if (!seconds || *seconds < least || *seconds > kMaxSettingSeconds) {
        return Status::failure(std::string(key) + "=" + value +
                               " is not a number of seconds from " + std::to_string(least) +
                               " to " + std::to_string(kMaxSettingSeconds));
    }
    out = *seconds;
    return {};
}

// A tmpfs size= value: a number with an optional k, m, g or % suffix.
Status set_size(std::string_view key, std::string &field, const std::string &value) {
    const std::size_t digits = value.find_first_not_of("0123456789");
    const bool suffix_ok =
        digits == std::string::npos ||
        (digits + 1 == value.size() &&
         std::string_view("kKmMgG%").find(value[digits]) != std::string_view::npos);
    if (digits == 0 || value.empty() || !suffix_ok) {
        return Status::failure(std::string(key) + "=" + value +
                               " is not a size; write a number with an optional k, m, g or % "
                               "suffix (e.g. 20g or 25%)");
    }
    field = value;
    return {};
}

Status apply_job_tmp(Config &config, std::string_view /*key*/, const std::string &value) {
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

Status apply_var_tmp(Config &config, std::string_view /*key*/, const std::string &value) {
    if (value == "job") {
        config.var_tmp = VarTmp::Job;
        return {};
    }
    if (value == "jail") {
        config.var_tmp = VarTmp::Jail;
        return {};
    }
    return Status::failure("var_tmp=" + value +
                           " is not a choice; write var_tmp=job (the default: /var/tmp is the "
                           "job's /tmp) or var_tmp=jail (the shared jail's own /var/tmp)");
}

Status apply_proc(Config &config, std::string_view /*key*/, const std::string &value) {
    ProcOptions checked;
    if (auto s = parse_proc_setting(value, checked); !s.ok()) {
        return s;
    }
    config.proc_options = value;
    return {};
}

Status apply_gpu(Config &config, std::string_view /*key*/, const std::string &value) {
    const auto mode = parse_gpu_mode(value);
    if (!mode) {
        return Status::failure("gpu=" + value +
                               " is not a mode; write gpu=auto (the default), gpu=on or gpu=off");
    }
    config.gpu = *mode;
    return {};
}

Status apply_gpu_mps_dir(Config &config, std::string_view key, const std::string &value) {
    if (auto s = set_path(key, config.gpu_mps_dir, value); !s.ok()) {
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

// The MPS daemon's /dev/shm is shared by every job of the node, so it can be
// neither /tmp (the jobs' own) nor the node's /dev/shm (the node daemons').
Status apply_gpu_mps_shm(Config &config, std::string_view key, const std::string &value) {
    if (auto s = set_path(key, config.gpu_mps_shm, value); !s.ok()) {
        return s;
    }
    for (const char *place : {"/tmp", "/dev/shm"}) {
        if (is_same_or_below(value, place)) {
            return Status::failure(
                "gpu_mps_shm=" + value + " lies under " + place +
                "; run nvidia-cuda-mps-control with a /dev/shm of its own, a tmpfs such as "
                "/run/nvidia/mps/shm bound over it, and give slurm-jail that directory");
        }
    }
    return {};
}

Status apply_run(Config &config, std::string_view /*key*/, const std::string &value) {
    if (value == "node") {
        config.run = RunMode::Node;
        return {};
    }
    if (value == "jail") {
        config.run = RunMode::Jail;
        return {};
    }
    return Status::failure("run=" + value +
                           " is not a mode; write run=node (the default: each node's own "
                           "fresh /run) or run=jail (the shared jail's /run directory)");
}

void show_binds(const Config &config, PieceSink &sink) {
    bool first = true;
    for (const auto &bind : config.binds) {
        sink.add(first ? "" : ",");
        sink.add(bind.source);
        sink.add(":");
        sink.add(bind.target);
        sink.add(bind.read_only ? ":ro" : "");
        first = false;
    }
}

// A path setting stored in Config's FIELD, and shown as it is.
template <std::string Config::*Field>
Status apply_path(Config &config, std::string_view key, const std::string &value) {
    return set_path(key, config.*Field, value);
}

template <std::string Config::*Field> void show_text(const Config &config, PieceSink &sink) {
    sink.add(config.*Field);
}

// A tmpfs size stored in Config's FIELD.
template <std::string Config::*Field>
Status apply_size(Config &config, std::string_view key, const std::string &value) {
    return set_size(key, config.*Field, value);
}

// A number of seconds, LEAST to kMaxSettingSeconds, stored in Config's FIELD.
template <int Config::*Field, int Least>
Status apply_seconds(Config &config, std::string_view key, const std::string &value) {
    return parse_seconds(key, value, config.*Field, Least);
}

void show_proc(const Config &config, PieceSink &sink) {
    sink.add(config.proc_options);
}

void show_gpu(const Config &config, PieceSink &sink) {
    sink.add(gpu_mode_name(config.gpu));
}

void show_run(const Config &config, PieceSink &sink) {
    sink.add(run_mode_name(config.run));
}

// name, default, repeatable, apply, show (nullptr: does not shape the view)
constexpr std::array kSettings = {
    Setting{"jail", "", false, apply_path<&Config::jail>, show_text<&Config::jail>},
    Setting{"bind", "", true, apply_bind, show_binds},
    Setting{"munge", "/run/munge", false, apply_path<&Config::munge_dir>,
            show_text<&Config::munge_dir>},
    Setting{"conf_dir", "/etc/slurm", false, apply_path<&Config::conf_dir>,
            show_text<&Config::conf_dir>},
    Setting{"spool", "/var/spool/slurmd", false, apply_path<&Config::spool_dir>,
            show_text<&Config::spool_dir>},
    Setting{"tmp", "/var/lib/slurm-jail/tmp", false, apply_path<&Config::tmp_dir>,
            show_text<&Config::tmp_dir>},
    Setting{"state", "/run/slurm-jail", false, apply_path<&Config::state_dir>, nullptr},
    Setting{"allow_opt_out", "", false, apply_opt_out, nullptr},
    Setting{"job_tmp", "tmpfs", false, apply_job_tmp, nullptr},
    Setting{"job_tmp_size", "", false, apply_size<&Config::job_tmp_size>, nullptr},
    Setting{"job_shm_size", "", false, apply_size<&Config::job_shm_size>, nullptr},
    Setting{"var_tmp", "job", false, apply_var_tmp, nullptr},
    Setting{"proc", "", false, apply_proc, show_proc},
    Setting{"build_timeout", "30", false, apply_seconds<&Config::build_timeout_s, 1>, nullptr},
    Setting{"recheck", "60", false, apply_seconds<&Config::recheck_s, 0>, nullptr},
    Setting{"gpu", "auto", false, apply_gpu, show_gpu},
    Setting{"gpu_driver_root", "", false, apply_path<&Config::gpu_driver_root>,
            show_text<&Config::gpu_driver_root>},
    Setting{"gpu_mps_dir", "/run/nvidia-mps", false, apply_gpu_mps_dir,
            show_text<&Config::gpu_mps_dir>},
    Setting{"gpu_mps_shm", "", false, apply_gpu_mps_shm, nullptr},
    Setting{"run", "node", false, apply_run, show_run},
};

} // namespace

std::span<const Setting> settings() {
    return kSettings;
}

const Setting *find_setting(std::string_view name) {
    const auto *row = std::find_if(kSettings.begin(), kSettings.end(),
                                   [name](const Setting &s) { return s.name == name; });
    return row == kSettings.end() ? nullptr : row;
}

} // namespace sjail
