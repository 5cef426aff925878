// SPDX-License-Identifier: Apache-2.0
#include "session_plan.hpp"

#include "sjail/core/path_rules.hpp"
#include "sjail/core/whole_number.hpp"

#include <sys/wait.h>

namespace sjail {
namespace {

// The number after `prefix` in a cgroup path component ("job_12" -> 12).
std::optional<std::uint32_t> number_after(std::string_view component, std::string_view prefix) {
    if (!component.starts_with(prefix)) {
        return std::nullopt;
    }
    return whole_number<std::uint32_t>(component.substr(prefix.size()));
}

} // namespace

PlugstackArgs chroot_args(const std::vector<PluginLine> &plugins, const std::string &file,
                          const std::vector<std::string> &empty_includes) {
    PlugstackArgs out;
    const auto lines = chroot_lines(plugins);
    if (lines.size() > 1) {
        out.status = Status::failure(file +
                                     " and the files it includes have more than one "
                                     "chroot.so line (" +
                                     lines[0].origin + ", " + lines[1].origin + "); keep one");
        return out;
    }
    if (lines.empty()) {
        std::string unmatched;
        for (const auto &include : empty_includes) {
            unmatched +=
                (unmatched.empty() ? "; these include lines match no file: " : ", ") + include;
        }
        out.status = Status::failure(
            file +
            " has no chroot.so line (\"required chroot.so jail=DIR ...\"), nor has any "
            "file it includes" +
            unmatched + "; add the node's chroot.so line there, see chroot.so(8)");
        return out;
    }
    out.args = lines[0].args;
    return out;
}

ModuleArgs parse_module_args(const std::vector<std::string> &args) {
    ModuleArgs out;
    bool seen_plugstack = false;
    bool seen_node = false;
    bool seen_no_job = false;
    const auto fail = [&out](const std::string &why) {
        out.status = Status::failure(why);
        return out;
    };
    for (const auto &arg : args) {
        const auto eq = arg.find('=');
        const std::string key = arg.substr(0, eq);
        const std::string value = eq == std::string::npos ? std::string() : arg.substr(eq + 1);
        bool *seen = key == "plugstack" ? &seen_plugstack
                     : key == "node"    ? &seen_node
                     : key == "no_job"  ? &seen_no_job
                                        : nullptr;
        if (seen == nullptr || eq == std::string::npos) {
            return fail("unknown argument '" + arg +
                        "'; the arguments are plugstack=FILE, node=auto|login|compute and "
                        "no_job=refuse|private (the jail's settings come from the chroot.so "
                        "line of plugstack.conf)");
        }
        if (*seen) {
            return fail(key + "= given twice; give it once");
        }
        *seen = true;
        if (key == "plugstack") {
            if (value.empty() || value.front() != '/') {
                return fail("plugstack='" + value + "' must be an absolute path");
            }
            out.plugstack = value;
        } else if (key == "node") {
            if (value == "auto") {
                out.node = NodeRole::Auto;
            } else if (value == "login") {
                out.node = NodeRole::Login;
            } else if (value == "compute") {
                out.node = NodeRole::Compute;
            } else {
                return fail("node='" + value + "' must be auto, login or compute");
            }
        } else if (value == "refuse") {
            out.no_job = NoJobSessions::Refuse;
        } else if (value == "private") {
            out.no_job = NoJobSessions::Private;
        } else {
            return fail("no_job='" + value + "' must be refuse or private");
        }
    }
    return out;
}

CgroupJob job_of_cgroup(std::string_view text) {
    CgroupJob out;
    for (std::string_view line : split(text, '\n')) {
        // "ID:CONTROLLERS:PATH"; the path may itself hold ':'.
        const auto first = line.find(':');
        const auto second = first == line.npos ? line.npos : line.find(':', first + 1);
        if (second == line.npos) {
            continue;
        }
        const auto parts = split(line.substr(second + 1), '/');
        std::optional<std::uint32_t> uid;
        for (std::size_t i = 0; i < parts.size(); ++i) {
            if (const auto u = number_after(parts[i], "uid_")) {
                uid = u;
            }
            const auto job = number_after(parts[i], "job_");
            if (!job || i + 1 >= parts.size() || !parts[i + 1].starts_with("step_")) {
                continue;
            }
            if ((out.job && *out.job != *job) || (out.uid && uid && *out.uid != *uid)) {
                out.job.reset();
                out.uid.reset();
                out.status = Status::failure("the process is in the cgroups of two different "
                                             "Slurm jobs; refusing to pick one");
                return out;
            }
            out.job = job;
            if (uid) {
                out.uid = uid;
            }
        }
    }
    return out;
}

std::optional<std::uint32_t> parse_job_id(std::string_view text) {
    auto job = whole_number<std::uint32_t>(text);
    if (job && *job == 0) {
        return std::nullopt;
    }
    return job;
}

std::optional<PasswdEntry> find_passwd_entry(std::string_view text, std::string_view name) {
    if (name.empty()) {
        return std::nullopt;
    }
    for (std::string_view line : split(text, '\n')) {
        const auto f = split(line, ':');
        if (f.size() != 7 || f[0] != name) {
            continue;
        }
        const auto uid = whole_number<std::uint32_t>(f[2]);
        const auto gid = whole_number<std::uint32_t>(f[3]);
        if (!uid || !gid) {
            return std::nullopt; // a malformed entry is no entry
        }
        return PasswdEntry{std::string(f[0]), *uid, *gid, std::string(f[5]), std::string(f[6])};
    }
    return std::nullopt;
}

SessionDecision decide_session(const SessionFacts &facts) {
    SessionDecision d;
    if (!facts.cgroup.status.ok()) {
        d.reason = facts.cgroup.status.message();
        return d;
    }
    if (facts.pam_env_job_malformed) {
        d.reason = "SLURM_JOB_ID in the PAM environment is not a job id";
        return d;
    }
    const auto &cg = facts.cgroup.job;
    const auto &env = facts.pam_env_job;
    if (cg && env && *cg != *env) {
        d.reason = "the process's cgroup says job " + std::to_string(*cg) +
                   " but SLURM_JOB_ID says job " + std::to_string(*env);
        return d;
    }
    if (facts.cgroup.uid && *facts.cgroup.uid != facts.uid) {
        d.reason = "the process was adopted into a job of uid " +
                   std::to_string(*facts.cgroup.uid) + ", not of uid " + std::to_string(facts.uid);
        return d;
    }
    if (cg || env) {
        d.action = SessionAction::Job;
        d.job = cg ? *cg : *env;
        return d;
    }
    // A compute node: jobs run here or may start at any time, so a session
    // that is in none of them must never share the node's PID namespace.
    const bool compute = facts.node == NodeRole::Compute || facts.node_has_jobs ||
                         (facts.node == NodeRole::Auto && facts.slurmd_here);
    if (!compute) {
        d.action = SessionAction::Node;
        return d;
    }
    if (facts.no_job == NoJobSessions::Private) {
        d.action = SessionAction::Private;
        return d;
    }
    const char *why = facts.node_has_jobs               ? "this node runs Slurm jobs"
                      : facts.node == NodeRole::Compute ? "this is a compute node (node=compute)"
                                                        : "slurmd runs on this node";
    d.reason = std::string(why) +
               ", but the session was not adopted into one of the user's jobs; "
               "pam_slurm_adopt.so (account, before pam_slurm_jail.so) adopts sessions of users "
               "with a job here, and no_job=private gives other sessions a PID namespace of "
               "their own (see pam_slurm_jail(8))";
    return d;
}

Status judge_owner_query(std::string_view output, bool in_time, int wait_status) {
    constexpr std::string_view kVerdict = "sjail-verdict ";
    std::optional<std::string_view> verdict;
    std::string_view last_other;
    for (std::string_view line : split(output, '\n')) {
        if (line.starts_with(kVerdict)) {
            verdict = line.substr(kVerdict.size());
        } else if (!line.empty()) {
            last_other = line;
        }
    }
    const std::string said =
        last_other.empty() ? std::string() : " (" + std::string(last_other) + ")";
    if (!in_time) {
        return Status::failure("asking slurmctld took too long; the query was stopped" + said);
    }
    if (WIFSIGNALED(wait_status)) {
        return Status::failure("the process asking slurmctld was killed by signal " +
                               std::to_string(WTERMSIG(wait_status)) + said);
    }
    if (!WIFEXITED(wait_status) || !verdict) {
        return Status::failure(
            "the process asking slurmctld ended without an answer (exit status " +
            std::to_string(WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1) + ")" + said);
    }
    if (verdict->starts_with("no ")) {
        return Status::failure(std::string(verdict->substr(3)));
    }
    if (*verdict != "ok" || WEXITSTATUS(wait_status) != 0) {
        return Status::failure("the process asking slurmctld gave no clear answer (exit status " +
                               std::to_string(WEXITSTATUS(wait_status)) + ")" + said);
    }
    return {};
}

} // namespace sjail
