// SPDX-License-Identifier: Apache-2.0
// Whether someone else could have changed a path component that root is
// about to follow, run, load, read or write in (pure). The trusted-path
// resolver (sys/trusted_path.hpp) applies these rules to each component.
// By default a component is trusted only when root owns it and neither group
// nor others can write it (the sshd ChrootDirectory rule). A policy can also
// trust the user running a program, let a root-owned sticky directory such
// as /tmp be passed through (never written in), and ignore write bits on a
// read-only mount: the GPU health checks' policy.
#pragma once

#include "sjail/core/status.hpp"

#include <string>
#include <string_view>

namespace sjail {

// What lstat and statvfs say about one path component.
struct PathFacts {
    unsigned owner = 0;
    unsigned mode = 0;            // st_mode: type and permission bits
    bool read_only_mount = false; // nobody writes on a read-only mount, whatever the mode
};

enum class PathRole {
    // A directory the path passes through.
    directory_on_the_way,
    // A link on the way: nobody can change a link in place, so only its owner counts.
    symlink,
    // The file that is run, loaded or read.
    file_to_use,
    // The directory the path ends at, where files are created: sticky is not enough.
    directory_to_write,
};

struct TrustPolicy {
    unsigned caller = 0;           // besides root, who may own what is trusted
    bool sticky_passage = false;   // a sticky directory may be passed through
    bool read_only_mounts = false; // write bits on a read-only mount do not count
};

// The plugin's policy: root only, no exceptions.
inline constexpr TrustPolicy kRootOnly{};

// The GPU health checks' policy for a program run by `caller`.
constexpr TrustPolicy checks_policy(unsigned caller) {
    return {caller, true, true};
}

// Empty when only root and the policy's caller can change this component;
// otherwise why not, e.g. "is owned by uid 1000" or "is writable by group or
// others (mode 0777)".
std::string untrusted_because(const PathFacts &facts, const TrustPolicy &policy, PathRole role);

// "root" or "root or uid 1000": who may own what a policy trusts.
std::string trusted_owners(unsigned caller);

// The rule as a status naming `shown`, the cause and the fix ("run: chown
// root:root PATH", "run: chmod go-w PATH").
Status check_trusted(std::string_view shown, const PathFacts &facts, const TrustPolicy &policy,
                     PathRole role);

} // namespace sjail
