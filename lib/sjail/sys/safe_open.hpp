// SPDX-License-Identifier: Apache-2.0
// Opening paths without following symlinks, checking ownership on the way.
// This is how the plugin avoids every path a user could redirect.
#pragma once

#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"

#include <cstdint>
#include <string>

namespace sjail {

// How open_below resolves a path. Magic links (/proc/PID/fd/N and the like)
// are never followed, whatever the policy.
enum class Resolve {
    FollowSymlinks,   // symlinks are followed; absolute paths and ".." are allowed
    NoSymlinks,       // a symlink anywhere on the path is refused (ELOOP)
    Beneath,          // no symlink, and nothing outside `dir` (".." above it, absolute)
    BeneathSameMount, // as Beneath, and no crossing into a mount below `dir` (EXDEV)
    InRoot,           // `dir` is the root: symlinks and ".." are resolved inside it
    BeneathCached,    // as Beneath, from the kernel's lookup cache alone: EAGAIN
                      // where a network filesystem would have to ask its server
    NoSymlinksCached, // as NoSymlinks, from the kernel's lookup cache alone
};

// openat2(2) of `path` relative to `dir` (AT_FDCWD: the current directory)
// with `flags` (O_CLOEXEC is always added; O_NOFOLLOW with O_PATH returns a
// trailing symlink as itself) under `policy`. On failure the Fd is invalid
// and errno tells why. No allocation: safe in a child forked from threads.
// The only place that calls openat2.
[[nodiscard]] Fd open_below(int dir, const char *path, std::uint64_t flags,
                            Resolve policy) noexcept;

// Where a check takes a file's owner and mode from: a fresh fstat, or the
// node's attribute cache (cached_stat.hpp), which asks a network
// filesystem's server nothing: only a step's own check of the jail
// (identify_jail) takes that, because a probe refreshes it (jail_probe.hpp).
// CachedOnly: the lookups too come from the kernel's caches alone
// (Resolve::BeneathCached), so that nothing on the way asks the server.
enum class Attributes { Fresh, Cached, CachedOnly };

// Opens an absolute host path (the jail, the state directory) as an O_PATH
// directory fd. Every component, the last included, must be a real directory
// (no symlink), owned by root and not writable by group or others. With
// Attributes::CachedOnly, a component the kernel would have to ask a network
// filesystem's server for fails, and `not_cached` (when given) is set.
Status open_root_owned_dir(const std::string &path, Fd &out, Attributes attrs = Attributes::Fresh,
                           bool *not_cached = nullptr);

enum class TargetType { Directory, File };

// Opens `target` (absolute, as seen inside the jail) below the jail root fd,
// one component at a time with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, so a
// symlink anywhere on the way is refused. Every directory above the target
// must be root-owned and not writable by group or others; the target must
// already exist (nothing is ever created inside the jail) with type `type`.
Status open_mount_target(int jail_root, const std::string &target, TargetType type, Fd &out);

// Creates an absolute host directory with `mode` if it is missing. Parents
// must be root-owned and not group/other-writable (so no user can plant a
// symlink on the way); an existing final directory must be root-owned and
// not writable by group or others unless `mode` asks for that.
Status ensure_root_dir(const std::string &path, unsigned mode);

// What ensure_root_dir would say, without creating or changing anything: a
// missing directory is fine when everything above it passes.
Status check_root_dir(const std::string &path, unsigned mode);

// Opens an absolute node path (a bind source) as an O_PATH fd, one component
// at a time from "/". A symlink is followed only while every directory
// walked so far, the one holding the link included, is root-owned and closed
// to group and others (so /etc/resolv.conf may be a link into /run). Below a
// directory a user can write, a symlink is refused: a user must never be able
// to point a bind at a host path of their choosing.
Status open_node_path(const std::string &path, Fd &out);

} // namespace sjail
