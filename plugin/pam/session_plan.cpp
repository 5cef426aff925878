// SPDX-License-Identifier: Apache-2.0
#include "session_plan.hpp"

#include <charconv>

namespace sjail {
namespace {

constexpr std::string_view kSpace = " \t\r";

std::vector<std::string_view> split(std::string_view text, char sep) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto end = text.find(sep, start);
        if (end == std::string_view::npos) {
            parts.push_back(text.substr(start));
            break;
        }
        parts.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (true) {
        i = line.find_first_not_of(kSpace, i);
        if (i == std::string_view::npos) {
            return out;
        }
        const auto end = std::min(line.find_first_of(kSpace, i), line.size());
        out.push_back(line.substr(i, end - i));
        i = end;
    }
}

std::optional<std::uint32_t> parse_u32(std::string_view text) {
    std::uint32_t value = 0;
    if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != text.npos) {
        return std::nullopt;
    }
    const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (err != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

// "chroot.so" or ".../chroot.so".
bool names_chroot_so(std::string_view plugin) {
    constexpr std::string_view kName = "chroot.so";
    return plugin == kName || (plugin.size() > kName.size() && plugin.ends_with(kName) &&
                               plugin[plugin.size() - kName.size() - 1] == '/');
}

// The number after `prefix` in a cgroup path component ("job_12" -> 12).
std::optional<std::uint32_t> number_after(std::string_view component, std::string_view prefix) {
    if (!component.starts_with(prefix)) {
        return std::nullopt;
    }
    return parse_u32(component.substr(prefix.size()));
}

} // namespace

PlugstackArgs chroot_args_from_plugstack(std::string_view text, const std::string &file) {
    PlugstackArgs out;
    int found = 0;
    for (std::string_view line : split(text, '\n')) {
        line = line.substr(0, line.find('#'));
        const auto w = words(line);
        if (w.size() < 2 || (w[0] != "required" && w[0] != "optional") || !names_chroot_so(w[1])) {
            continue;
        }
        if (++found > 1) {
            out.status = Status::failure(file + " has more than one chroot.so line; keep one");
            out.args.clear();
            return out;
        }
        for (std::size_t i = 2; i < w.size(); ++i) {
            out.args.emplace_back(w[i]);
        }
    }
    if (found == 0) {
        out.status = Status::failure(
            file + " has no chroot.so line (\"required chroot.so jail=DIR ...\"; include lines "
                   "are not followed); add the node's chroot.so line there, see chroot.so(8)");
    }
    return out;
}

ModuleArgs parse_module_args(const std::vector<std::string> &args) {
    ModuleArgs out;
    bool seen = false;
    for (const auto &arg : args) {
        constexpr std::string_view kKey = "plugstack=";
        if (!std::string_view(arg).starts_with(kKey)) {
            out.status = Status::failure("unknown argument '" + arg +
                                         "'; the only argument is plugstack=FILE (the jail's "
                                         "settings come from the chroot.so line there)");
            return out;
        }
        const std::string value = arg.substr(kKey.size());
        if (seen) {
            out.status = Status::failure("plugstack= given twice; give it once");
            return out;
        }
        if (value.empty() || value.front() != '/') {
            out.status = Status::failure("plugstack='" + value + "' must be an absolute path");
            return out;
        }
        seen = true;
        out.plugstack = value;
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
    auto job = parse_u32(text);
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
        const auto uid = parse_u32(f[2]);
        const auto gid = parse_u32(f[3]);
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
    if (facts.node_has_jobs) {
        d.reason = "this node runs Slurm jobs, but the session was not adopted into one of the "
                   "user's jobs; pam_slurm_adopt.so (account, before pam_slurm_jail.so) adopts "
                   "sessions of users with a job here (see pam_slurm_jail(8))";
        return d;
    }
    d.action = SessionAction::Node;
    return d;
}

} // namespace sjail
