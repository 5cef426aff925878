// SPDX-License-Identifier: Apache-2.0
// Resolving a path below a root directory, following only symlinks that root
// placed: the way to reach the node's driver (/lib -> usr/lib on a merged-/usr
// system) and the jail's library directories without ever following a path
// that a user could have redirected.
#pragma once

#include "sjail/core/status.hpp"
#include "sjail/core/trust_rules.hpp"
#include "sjail/sys/fd.hpp"

#include <string>
#include <string_view>
#include <sys/stat.h>

namespace sjail {

// Directory: the path ends at a directory that files are created in or read
// from. PassedDirectory: one that is only passed through (where the policy
// allows, a sticky one is fine).
enum class TrustedKind { Directory, File, PassedDirectory };

struct TrustedOpen {
    Fd fd;                // O_PATH, or opened for reading when asked
    struct stat st {};    // of what `fd` refers to
    std::string shown;    // the path as resolved, for messages
    bool missing = false; // a component does not exist (the status says which)
    int error = 0;        // errno when the path cannot be followed (ENOENT, ENOTDIR, ELOOP...)
    std::string refused_because; // when a trust rule refused `shown`: why (trust_rules.hpp)
};

// Opens `path` below the directory fd `root` (which the caller checked).
// Each directory on the way must be root-owned and closed to group and
// others; so must the final directory, or the final file be root-owned and
// not writable by group or others. A symlink is followed only when it is
// owned by root (its directory was checked on the way), and it resolves
// inside `root`: an absolute target starts again at `root`, ".." stops there;
// at most 40 symlinks. `shown_root` prefixes paths in messages ("" for the
// node's "/", "jail " + path for a jail). `for_reading` opens a file
// O_RDONLY instead of O_PATH (checked to be the same file). `policy` may
// relax the ownership and mode rules (trust_rules.hpp); the plugin keeps the
// default, root only.
[[nodiscard]] Status open_trusted(int root, std::string_view shown_root, std::string_view path,
                                  TrustedKind want, TrustedOpen &out, bool for_reading = false,
                                  const TrustPolicy &policy = kRootOnly);

// The same below the node's own "/"; the canonical path is then `out.shown`.
[[nodiscard]] Status open_trusted_on_node(std::string_view path, TrustedKind want, TrustedOpen &out,
                                          bool for_reading = false,
                                          const TrustPolicy &policy = kRootOnly);

// Opens `name` (a plain name) in directory `dir`, following symlinks only
// within `dir` itself (the soname links of a library directory): a link whose
// target holds a '/' is refused, so nothing outside `dir` is reached. The
// file it ends at must be a regular file, root-owned, not writable by group
// or others. `real` receives that file's name.
[[nodiscard]] Status open_in_dir(int dir, const std::string &dir_shown, const std::string &name,
                                 std::string &real, TrustedOpen &out);

} // namespace sjail
