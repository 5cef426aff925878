// SPDX-License-Identifier: Apache-2.0
// What containers in jobs need from the node and the jail. Pure: the system
// layer (inspect.cpp) gathers the facts.
//
// Rootless podman, Charliecloud's ch-run and enroot (pyxis) start every
// container in a user namespace of the user's, mount images over FUSE, and
// podman maps the user's subordinate ids with the jail's setuid
// newuidmap/newgidmap. When the jail has one of them and the node or the
// jail lacks what it needs, jobs still run, but their containers fail: each
// such gap is a warning. A subordinate range that holds another user's or
// group's id is a problem: its owner's containers can act as them. A jail
// without a container runtime is not checked.
#pragma once

#include "finding.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjail::check {

// A setuid helper in the jail (newuidmap, newgidmap) as found.
struct IdMapHelper {
    std::string path;        // in the jail, e.g. /usr/bin/newuidmap
    bool setuid_root = true; // owned by root with the set-user-ID bit
};

struct ContainerFacts {
    std::vector<std::string> runtimes; // the runtimes' paths found in the jail
    // /proc/sys/user/max_user_namespaces; nullopt: unreadable
    std::optional<long long> max_user_namespaces;
    // /proc/sys/kernel/apparmor_restrict_unprivileged_userns is 1 (Ubuntu
    // 23.10 on); false also where the file does not exist
    bool apparmor_restricts_userns = false;
    // /dev/fuse's mode bits on the node; nullopt: no /dev/fuse (or not a
    // character device)
    std::optional<unsigned> fuse_mode;
    std::vector<IdMapHelper> id_map_helpers; // those that exist in the jail
    // the jail's regular users (uid 1000 to 60000) with no line in the
    // jail's /etc/subuid or /etc/subgid
    std::vector<std::string> users_without_subids;
    // subordinate ranges that hold a user's or group's own id (subid_overlaps)
    std::vector<std::string> subid_overlaps;
};

// One finding per gap, each naming what it breaks and its fix: warnings for
// what containers need, a problem per subordinate range that holds a user's
// or group's id; nothing when facts.runtimes is empty.
std::vector<Finding> container_findings(const std::string &jail, const ContainerFacts &facts);

// The names of passwd's regular users (uid 1000 to 60000, as useradd gives
// them; not system accounts such as slurm or nobody) that have no NAME: line
// in any of `subid_files` (the texts of /etc/subuid and /etc/subgid: a user
// needs both).
std::vector<std::string> users_without_subids(std::string_view passwd,
                                              const std::vector<std::string_view> &subid_files);

// Each range of `subids` (the text of /etc/subuid or /etc/subgid:
// NAME:FIRST:COUNT) that holds the id of an entry of `owners` (the text of
// /etc/passwd or /etc/group: NAME:x:ID:...), as "NAME's subordinate ids
// FIRST-LAST in FILE include OWNER's id ID: NAME's containers can act as
// OWNER on the shared jail". `file` names the subid file in the text.
std::vector<std::string> subid_overlaps(std::string_view owners, std::string_view subids,
                                        const std::string &file);

// The problem with Slurm's own OCI support (`oci_conf`, oci.conf beside
// slurm.conf, exists): for `srun --container=DIR` slurmstepd reads
// DIR/config.json as root on the node's own root, at a path the user
// chooses, before the step enters the jail.
Finding slurm_oci_finding(const std::string &oci_conf);

} // namespace sjail::check
