// SPDX-License-Identifier: Apache-2.0
// A file's attributes as the node's kernel already has them. On a network or
// FUSE filesystem (the shared jail) an ordinary stat asks the server again
// once the attribute cache has expired; statx with AT_STATX_DONT_SYNC answers
// from that cache with no round trip, however old it is: only another
// ordinary stat or lookup (a probe's, a task's) refreshes it. Device, inode
// number and file type never change for an open file, cached or not. Local
// filesystems have no such cache: there it is an ordinary stat.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

namespace sjail {

// fstatat(dir, path, st, flags) from the attribute cache. `flags` as for
// fstatat (AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW). Returns 0, or -1 with errno.
// No allocation: safe in a child forked from threads.
int stat_cached(int dir, const char *path, int flags, struct stat &st) noexcept;

// The same for an open file descriptor (an O_PATH one included).
inline int fstat_cached(int fd, struct stat &st) noexcept {
    return stat_cached(fd, "", AT_EMPTY_PATH, st);
}

} // namespace sjail
