// SPDX-License-Identifier: Apache-2.0
#include "container_needs.hpp"

#include "requirements.hpp"
#include "sjail/core/whole_number.hpp"

#include <algorithm>

namespace sjail::check {
namespace {

// Regular users' ids, as useradd gives them (login.defs UID_MIN, UID_MAX);
// above are system accounts such as Debian's slurm (64030) and nobody.
constexpr long long kFirstUserId = 1000;
constexpr long long kLastUserId = 60000;
constexpr unsigned kOthersReadWrite = 0006;
constexpr std::size_t kNamesShown = 5;

std::string joined(const std::vector<std::string> &items, std::size_t most) {
    std::string out;
    for (std::size_t i = 0; i < items.size() && i < most; ++i) {
        out += (i == 0 ? "" : ", ") + items[i];
    }
    if (items.size() > most) {
        out += " and " + std::to_string(items.size() - most) + " more";
    }
    return out;
}

// The lines of `text`, without their newlines.
std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const auto end = text.find('\n');
        lines.push_back(text.substr(0, end));
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    }
    return lines;
}

// Field `index` (0-based) of a colon-separated line, or "" when it has fewer.
std::string_view field(std::string_view line, std::size_t index) {
    for (std::size_t i = 0; i < index; ++i) {
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            return {};
        }
        line.remove_prefix(colon + 1);
    }
    return line.substr(0, line.find(':'));
}

} // namespace

std::vector<std::string> users_without_subids(std::string_view passwd,
                                              const std::vector<std::string_view> &subid_files) {
    std::vector<std::vector<std::string>> named; // each file's names
    named.reserve(subid_files.size());
    for (const auto file : subid_files) {
        named.push_back(passwd_names(file));
    }
    std::vector<std::string> missing;
    for (const auto line : lines_of(passwd)) {
        const auto name = field(line, 0);
        const auto uid = whole_number<long long>(field(line, 2));
        if (name.empty() || !uid || *uid < kFirstUserId || *uid > kLastUserId) {
            continue;
        }
        const bool in_all = std::all_of(named.begin(), named.end(), [&](const auto &names) {
            return std::find(names.begin(), names.end(), name) != names.end();
        });
        if (!in_all) {
            missing.emplace_back(name);
        }
    }
    return missing;
}

std::vector<std::string> subid_overlaps(std::string_view owners, std::string_view subids,
                                        const std::string &file) {
    std::vector<std::string> out;
    for (const auto range : lines_of(subids)) {
        const auto first = whole_number<long long>(field(range, 1));
        const auto count = whole_number<long long>(field(range, 2));
        if (field(range, 0).empty() || !first || !count || *count <= 0) {
            continue;
        }
        const long long last = *first + *count - 1;
        for (const auto owner : lines_of(owners)) {
            const auto id = whole_number<long long>(field(owner, 2));
            if (field(owner, 0).empty() || !id || *id < *first || *id > last) {
                continue;
            }
            out.push_back(std::string(field(range, 0)) + "'s subordinate ids " +
                          std::to_string(*first) + "-" + std::to_string(last) + " in " + file +
                          " include " + std::string(field(owner, 0)) + "'s id " +
                          std::to_string(*id) + ": " + std::string(field(range, 0)) +
                          "'s containers can act as " + std::string(field(owner, 0)) +
                          " on the shared jail");
        }
    }
    return out;
}

Finding slurm_oci_finding(const std::string &oci_conf) {
    return {Severity::Problem,
            oci_conf + " turns on Slurm's own OCI support: for srun --container=DIR, slurmstepd "
                       "reads DIR/config.json as root on the node's own root, at a path the user "
                       "chooses, before the step enters the jail",
            "remove " + oci_conf +
                "; users run containers inside their jobs with podman or ch-run (see "
                "docs/containers.md)"};
}

std::vector<Finding> container_findings(const std::string &jail, const ContainerFacts &facts) {
    std::vector<Finding> out;
    if (facts.runtimes.empty()) {
        return out;
    }
    const std::string runtimes =
        "the jail's container runtimes (" + joined(facts.runtimes, kNamesShown) + ")";
    auto warn = [&](const std::string &cause, const std::string &fix) {
        out.push_back({Severity::Warning, cause, fix});
    };
    if (facts.max_user_namespaces && *facts.max_user_namespaces == 0) {
        warn("this node allows no user namespaces (user.max_user_namespaces is 0): " + runtimes +
                 " fail in every job",
             "sysctl -w user.max_user_namespaces=63936, and the same in /etc/sysctl.d/");
    }
    if (facts.apparmor_restricts_userns) {
        warn("AppArmor restricts unprivileged user namespaces on this node "
             "(kernel.apparmor_restrict_unprivileged_userns is 1, Ubuntu's default from 23.10): " +
                 runtimes + " fail in jobs",
             "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, and the same in "
             "/etc/sysctl.d/ (or an AppArmor profile that allows userns for them)");
    }
    if (!facts.fuse_mode) {
        warn("this node has no /dev/fuse: " + runtimes +
                 " cannot mount images over FUSE (SquashFS files, fuse-overlayfs, enroot)",
             "load the fuse module (modprobe fuse, and list it in /etc/modules-load.d/)");
    } else if ((*facts.fuse_mode & kOthersReadWrite) != kOthersReadWrite) {
        warn("/dev/fuse on this node is not readable and writable by every user: " + runtimes +
                 " cannot mount images over FUSE (SquashFS files, fuse-overlayfs, enroot)",
             "chmod 0666 /dev/fuse, and a udev rule that keeps it so: KERNEL==\"fuse\", "
             "MODE=\"0666\"");
    }
    for (const auto &helper : facts.id_map_helpers) {
        if (!helper.setuid_root) {
            warn(jail + helper.path +
                     " is not setuid root: rootless podman maps only the user's own id, and "
                     "images with files of other owners fail",
                 "chown root:root " + jail + helper.path + " && chmod 4755 " + jail + helper.path +
                     " (or reinstall uidmap in the jail)");
        }
    }
    for (const auto &overlap : facts.subid_overlaps) {
        out.push_back({Severity::Problem, overlap,
                       "give every range of " + jail +
                           "/etc/subuid and /etc/subgid ids that no user or group has (raise "
                           "SUB_UID_MIN and SUB_GID_MIN in the jail's /etc/login.defs above "
                           "every id of the site's directory)"});
    }
    if (!facts.users_without_subids.empty()) {
        warn("jail users without subordinate ids in " + jail + "/etc/subuid and /etc/subgid (" +
                 joined(facts.users_without_subids, kNamesShown) +
                 "): rootless podman maps only their own id",
             "give each a range in the jail, e.g. usermod --add-subuids 100000-165535 "
             "--add-subgids 100000-165535 NAME (useradd does it when uidmap is installed first)");
    }
    return out;
}

} // namespace sjail::check
