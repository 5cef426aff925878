// SPDX-License-Identifier: Apache-2.0
// Whether another user could have changed a file that a check runs, loads,
// reads or writes as root (pure). A path is trusted when nobody but root and
// the user running the check can change where it leads or what it holds:
// every directory on the way, every symlink and the file itself owned by root
// or that user, and not writable by group or others (a root-owned sticky
// directory such as /tmp may be passed through; nothing on a read-only mount
// can be written at all).
#pragma once

#include <string>

namespace sjh {

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
    // The directory state files are created in: sticky is not enough.
    directory_to_write,
};

// Empty when only root and `caller` can change this component; otherwise why
// not, e.g. "is owned by uid 1000" or "is writable by group or others (mode 0777)".
std::string untrusted_because(const PathFacts &facts, unsigned caller, PathRole role);

// "root" or "root or uid 1000": who may own what a check trusts.
std::string trusted_owners(unsigned caller);

} // namespace sjh
