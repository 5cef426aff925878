// SPDX-License-Identifier: Apache-2.0
// Small regular files on the node (the state directory, /proc): opened
// without following links, read whole up to a limit, replaced atomically.
// The one place the plugin reads and writes whole files.
#pragma once

#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace sjail {

// Opens `path` with O_NOFOLLOW and O_NONBLOCK (a planted FIFO must not hang
// the open); anything but a regular file is closed again (errno EINVAL).
Fd open_regular(const std::string &path, int flags, mode_t mode = 0600);

// Reads a whole (small) file from an fd opened for reading; an error past `limit` bytes.
Status read_whole_file(int fd, const std::string &shown, std::string &text,
                       std::size_t limit = 64UL << 20);

// The text of a small regular file, or "" when it is missing, is not a
// regular file, cannot be read or is larger than `limit` bytes.
std::string read_small_file(const std::string &path, std::size_t limit = 65536);

// Replaces `path` by a new file holding `text` with mode `mode`: writes a
// temp file under a fresh name (mkostemp) in the same directory, fsyncs it,
// renames it over `path` (a symlink there is replaced, never followed) and
// fsyncs the directory. Readers see the old file or the new one, never a part.
[[nodiscard]] Status write_file_atomically(const std::string &path, std::string_view text,
                                           mode_t mode = 0600);

} // namespace sjail
