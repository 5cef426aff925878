// SPDX-License-Identifier: Apache-2.0
// The settings of chroot.so, as its plugstack.conf line gives them
// (parse_config.hpp reads the line; settings.hpp has a row per key). Pure.
#pragma once

#include "sjail/core/gpu_mode.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sjail {

// One admin-listed bind: bind=SRC[:DST][:ro]
struct BindSpec {
    std::string source;
    std::string target;
    bool read_only = false;

    bool operator==(const BindSpec &) const = default;
};

// Where a job's private /tmp lives (job_tmp=).
enum class JobTmp {
    Tmpfs,     // a tmpfs of its own, job_tmp_size= at most (default)
    Directory, // a directory of its own below job_tmp=DIR on the node
    Node,      // the node-wide tmp= directory, shared by every job (job_tmp=node)
};

// What a job's /var/tmp is (var_tmp=).
enum class VarTmp {
    Job,  // the job's /tmp, bound again at /var/tmp (default)
    Jail, // the shared jail's own /var/tmp, as it is
};

// What the jail's /run is (run=).
enum class RunMode {
    Node, // a fresh tmpfs made per node, the node's own runtime state (default)
    Jail, // the shared jail's own /run directory, as it is
};

struct Config {
    std::string jail;                                // jail=   (required)
    std::vector<BindSpec> binds;                     // bind=   (repeatable)
    std::string munge_dir = "/run/munge";            // munge=
    std::string conf_dir = "/etc/slurm";             // conf_dir=
    std::string spool_dir = "/var/spool/slurmd";     // spool=
    std::string tmp_dir = "/var/lib/slurm-jail/tmp"; // tmp=
    std::string state_dir = "/run/slurm-jail";       // state=
    std::vector<std::string> allow_opt_out;          // allow_opt_out=user,uid,...
    int build_timeout_s = 30;                        // build_timeout= (seconds)
    int recheck_s = 60;                              // recheck= (seconds; 0: every step)
    JobTmp job_tmp = JobTmp::Tmpfs;                  // job_tmp=tmpfs|DIR|node
    std::string job_tmp_dir;                         // job_tmp=DIR
    std::string job_tmp_size;                        // job_tmp_size= (tmpfs size=)
    std::string job_shm_size;                        // job_shm_size= (tmpfs size=)
    VarTmp var_tmp = VarTmp::Job;                    // var_tmp=job|jail
    std::string proc_options;                        // proc= (empty: the node's own)
    GpuMode gpu = GpuMode::Auto;                     // gpu=auto|on|off
    std::string gpu_driver_root;                     // gpu_driver_root= (empty: the usual places)
    std::string gpu_mps_dir = "/run/nvidia-mps";     // gpu_mps_dir=
    std::string gpu_mps_shm;                         // gpu_mps_shm= (empty: jobs' own /dev/shm)
    RunMode run = RunMode::Node;                     // run=node|jail
    // Not a setting: the volume that jail= names, once a step resolved the
    // jail it enters (sys/node/jail_generation.hpp): on a volume with
    // generations, jail is then its live generation; else jail itself.
    std::string jail_volume;
    // Not a setting: with jail_volume, the live generation that jail is
    // (0: a single-directory jail).
    std::uint64_t jail_generation = 0;

    bool operator==(const Config &) const = default;
};

// "node" or "jail", as run= takes it.
std::string_view run_mode_name(RunMode mode);

// True when `user` (a name) or `uid` is listed in allow_opt_out.
bool opt_out_allowed(const Config &config, std::string_view user, unsigned uid);

} // namespace sjail
