// SPDX-License-Identifier: Apache-2.0
// Small file and descriptor helpers for tests and benchmarks. Each returns ""
// on success or a message naming what failed (never throws).
#pragma once

#include <cstddef>
#include <string>
#include <sys/types.h>

namespace kit {

// "WHAT: strerror(errno)".
std::string errno_text(const std::string &what);

// Every missing directory of `path` (mode 0755), then `path` itself set to `mode`.
std::string mkdir_p(const std::string &path, mode_t mode);
std::string write_file(const std::string &path, const std::string &text);
// The whole file; "" when it cannot be read.
std::string read_file(const std::string &path);

// Exactly `size` bytes, retried on EINTR and short counts; false on error or EOF.
bool write_all(int fd, const void *data, std::size_t size);
bool read_all(int fd, void *data, std::size_t size);
// Everything up to EOF.
std::string read_to_end(int fd);

} // namespace kit
