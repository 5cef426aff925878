// SPDX-License-Identifier: Apache-2.0
// What pam_slurm_jail decides for an SSH session. Pure: no system calls.
//
// The module reads the chroot.so line of plugstack.conf (so logins and jobs
// can never disagree on the jail), finds the job a session was adopted into
// by pam_slurm_adopt (the process's cgroup, or SLURM_JOB_ID in the PAM
// environment, which pam_slurm_adopt sets) and looks the user up in the
// jail's /etc/passwd.
#pragma once

#include "status.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjail {

// The settings of the one chroot.so line of a plugstack.conf text
// ("required chroot.so jail=/mnt/jail ..."; the plugin may be named by path).
// No chroot.so line, or more than one, is an error naming `file`.
// `include` lines are not followed: the chroot.so line must be in `file`.
struct PlugstackArgs {
    std::vector<std::string> args;
    Status status;
};
PlugstackArgs chroot_args_from_plugstack(std::string_view text, const std::string &file);

// The module's own arguments: "plugstack=FILE" (default
// /etc/slurm/plugstack.conf); anything else is an error.
struct ModuleArgs {
    std::string plugstack = "/etc/slurm/plugstack.conf";
    Status status;
};
ModuleArgs parse_module_args(const std::vector<std::string> &args);

// The Slurm job of a /proc/PID/cgroup text: the "job_N" component of a
// path that also has a "step_*" component below it (cgroup v1 and v2).
// Several different jobs in one text is an error (nothing is trusted).
struct CgroupJob {
    std::optional<std::uint32_t> job;
    std::optional<std::uint32_t> uid; // "uid_U" above it (cgroup v1)
    Status status;
};
CgroupJob job_of_cgroup(std::string_view text);

// A decimal job id ("123"), or nothing.
std::optional<std::uint32_t> parse_job_id(std::string_view text);

// One /etc/passwd entry.
struct PasswdEntry {
    std::string name;
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    std::string home;
    std::string shell;
};
// The entry of `name` in a passwd text, or nothing.
std::optional<PasswdEntry> find_passwd_entry(std::string_view text, std::string_view name);

// Where the session goes.
enum class SessionAction {
    Node,   // the node's jail namespace (a login node)
    Job,    // the job's namespaces (a compute node, adopted into `job`)
    Refuse, // no session
};
struct SessionFacts {
    CgroupJob cgroup;                         // from /proc/self/cgroup
    std::optional<std::uint32_t> pam_env_job; // SLURM_JOB_ID in the PAM environment
    bool pam_env_job_malformed = false;       // SLURM_JOB_ID set but not a job id
    bool node_has_jobs = false;               // STATE/jobs has a job on this node
    std::uint32_t uid = 0;                    // the user's uid
};
struct SessionDecision {
    SessionAction action = SessionAction::Refuse;
    std::uint32_t job = 0;
    std::string reason; // for Refuse
};
SessionDecision decide_session(const SessionFacts &facts);

} // namespace sjail
