// SPDX-License-Identifier: Apache-2.0
// What pam_slurm_jail decides for an SSH session. Pure: no system calls.
//
// The module reads the chroot.so line of plugstack.conf or of a file it
// includes (so logins and jobs can never disagree on the jail), finds the job a session was adopted
// into by pam_slurm_adopt (the process's cgroup, or SLURM_JOB_ID in the PAM environment, which
// pam_slurm_adopt sets) and looks the user up in the jail's /etc/passwd.
#pragma once

#include "sjail/core/plugstack.hpp"
#include "sjail/core/status.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjail {

// The settings of the one chroot.so line among the plugin lines that
// plugstack.conf (`file`) and the files it includes hold, in Slurm's order
// (sys/plugstack.hpp reads them; the plugin may be named by path). No
// chroot.so line, or more than one, is an error naming `file`;
// `empty_includes` (include lines matching no file) are named with it.
struct PlugstackArgs {
    std::vector<std::string> args;
    Status status;
};
PlugstackArgs chroot_args(const std::vector<PluginLine> &plugins, const std::string &file,
                          const std::vector<std::string> &empty_includes = {});

// What the node is, for sessions not adopted into a job (node=).
enum class NodeRole {
    Auto,    // a compute node when slurmd runs here or the node has jobs
    Login,   // a login node unless it has jobs
    Compute, // always a compute node
};
// What a compute node gives a session not adopted into a job (no_job=).
enum class NoJobSessions {
    Refuse,  // no session
    Private, // a PID namespace and /proc of the session's own
};

// The module's own arguments: "plugstack=FILE" (default
// /etc/slurm/plugstack.conf), "node=auto|login|compute" (default auto),
// "no_job=refuse|private" (default refuse); anything else is an error.
struct ModuleArgs {
    std::string plugstack = "/etc/slurm/plugstack.conf";
    NodeRole node = NodeRole::Auto;
    NoJobSessions no_job = NoJobSessions::Refuse;
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
    Node,    // the node's jail namespace (a login node)
    Job,     // the job's namespaces (a compute node, adopted into `job`)
    Private, // the node's jail view with a PID namespace and /proc of the
             // session's own (a compute node, no job, no_job=private)
    Refuse,  // no session
};
struct SessionFacts {
    CgroupJob cgroup;                             // from /proc/self/cgroup
    std::optional<std::uint32_t> pam_env_job;     // SLURM_JOB_ID in the PAM environment
    bool pam_env_job_malformed = false;           // SLURM_JOB_ID set but not a job id
    bool node_has_jobs = false;                   // STATE/jobs has a job on this node
    bool slurmd_here = false;                     // a slurmd of this host runs
    NodeRole node = NodeRole::Auto;               // node=
    NoJobSessions no_job = NoJobSessions::Refuse; // no_job=
    std::uint32_t uid = 0;                        // the user's uid
};
struct SessionDecision {
    SessionAction action = SessionAction::Refuse;
    std::uint32_t job = 0;
    std::string reason; // for Refuse
};
SessionDecision decide_session(const SessionFacts &facts);

// The verdict of the child process that asked slurmctld about a job
// (job_owner.hpp): its output (diagnostics, then one "sjail-verdict ok" or
// "sjail-verdict no REASON" line), whether it ended before the deadline,
// and its wait status. Only "ok" from a child that exited 0 is ok.
Status judge_owner_query(std::string_view output, bool in_time, int wait_status);

} // namespace sjail
