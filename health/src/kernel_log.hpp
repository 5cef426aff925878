// SPDX-License-Identifier: Apache-2.0
// Reading the kernel log for Xids (thin system layer).
#pragma once

#include <cstdint>
#include <string>

namespace sjh {

inline constexpr const char *kDefaultKernelLog = "/dev/kmsg";

// The whole readable log. /dev/kmsg (or any character device) is read
// non-blocking record by record until the end; a regular file is read whole.
// Throws std::runtime_error naming the path.
std::string read_kernel_log(const std::string &path);

// The kernel log's clock (CLOCK_MONOTONIC), in microseconds.
std::uint64_t kernel_clock_now_us();

} // namespace sjh
