// SPDX-License-Identifier: Apache-2.0
#include "job_container_lines.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace sjail::check {
namespace {

constexpr std::string_view kOurs = "slurm_jail";

// "namespace/linux,namespace/slurm_jail" -> its non-empty items.
std::vector<std::string> split_list(std::string_view list) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t end = std::min(list.find(',', start), list.size());
        if (const auto item = trim(list.substr(start, end - start)); !item.empty()) {
            out.emplace_back(item);
        }
        start = end + 1;
    }
    return out;
}

// "job_container/tmpfs" -> "tmpfs"; "tmpfs" -> "tmpfs".
std::string plugin_name(std::string_view type) {
    const auto slash = type.find('/');
    return slash == std::string_view::npos ? std::string(type)
                                           : std::string(type.substr(slash + 1));
}

std::string join(const std::vector<std::string> &items) {
    std::string out;
    for (const auto &item : items) {
        out += (out.empty() ? "" : ", ") + item;
    }
    return out;
}

// The job container plugins slurmd would load, as written, ours included.
std::vector<std::string> configured(const JobContainerLines &lines, const SlurmInterface &slurm) {
    auto out = split_list(lines.job_container_type);
    if (slurm.namespace_plugins) {
        for (auto &type : split_list(lines.namespace_type)) {
            out.push_back(std::move(type));
        }
    }
    return out;
}

bool has_contain(std::string_view prolog_flags) {
    const auto flags = split_list(prolog_flags);
    return std::any_of(flags.begin(), flags.end(),
                       [](const std::string &flag) { return lower(flag) == "contain"; });
}

void check_not_configured(const JobContainerLines &lines, const SlurmInterface &slurm,
                          std::vector<Finding> &out) {
    const std::string where = lines.has_includes ? " (its Include files were not read)" : "";
    out.push_back({Severity::Warning,
                   "slurm.conf names no job container" + where +
                       ": sbcast files, the extern step and the processes pam_slurm_adopt "
                       "adopts are not in the job's view of the jail",
                   "add " + job_container_line(slurm) + " and PrologFlags=Contain to slurm.conf"});
}

void check_others(const std::vector<std::string> &others, bool ours, const SlurmInterface &slurm,
                  std::vector<Finding> &out) {
    if (others.empty()) {
        return;
    }
    const std::string cause =
        ours ? "slurm.conf stacks " + join(others) +
                   " with slurm-jail's job container: each makes per-job namespaces of its own, "
                   "and a process ends up in those of the plugin it joined last"
             : "slurm.conf's job container " + join(others) +
                   " makes per-job namespaces of its own, out of chroot.so's reach: its steps' "
                   "tasks are refused or leave the job's view of the jail";
    out.push_back({Severity::Problem, cause,
                   "use " + job_container_line(slurm) +
                       " alone (chroot.so gives each job its own "
                       "PID namespace, /tmp and /dev/shm)"});
}

} // namespace

JobContainerLines job_container_lines(const SlurmConf &conf) {
    return {conf.get("JobContainerType", ""), conf.get("NamespaceType", ""),
            conf.get("PrologFlags", ""), !conf.includes.empty()};
}

std::string job_container_line(const SlurmInterface &slurm) {
    return slurm.namespace_plugins ? "NamespaceType=namespace/slurm_jail"
                                   : "JobContainerType=job_container/slurm_jail";
}

std::vector<Finding> check_job_container_lines(const JobContainerLines &lines,
                                               const SlurmInterface &slurm) {
    std::vector<Finding> out;
    if (!slurm.namespace_plugins && !lines.namespace_type.empty()) {
        out.push_back({Severity::Problem,
                       "slurm.conf sets NamespaceType=" + lines.namespace_type + ", which Slurm " +
                           slurm.release + " does not know (it came with 25.11)",
                       "write " + job_container_line(slurm) + " instead"});
    }
    bool ours = false;
    std::vector<std::string> others;
    for (const auto &type : configured(lines, slurm)) {
        if (plugin_name(type) == kOurs) {
            ours = true;
        } else {
            others.push_back(type);
        }
    }
    if (!ours && others.empty()) {
        check_not_configured(lines, slurm, out);
        return out;
    }
    check_others(others, ours, slurm, out);
    if (ours && slurm.namespace_plugins && lines.namespace_type.empty()) {
        out.push_back({Severity::Warning,
                       "slurm.conf sets JobContainerType=" + lines.job_container_type + "; Slurm " +
                           slurm.release +
                           " reads it as NamespaceType and logs a warning on every start",
                       "write " + job_container_line(slurm) + " instead"});
    }
    if (ours && !has_contain(lines.prolog_flags)) {
        out.push_back({Severity::Problem,
                       "slurm-jail's job container is configured but PrologFlags has no "
                       "Contain, which Slurm's job container plugins require",
                       "add Contain to PrologFlags in slurm.conf (PrologFlags=Contain)"});
    }
    return out;
}

} // namespace sjail::check
