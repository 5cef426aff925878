// SPDX-License-Identifier: Apache-2.0
#include "kernel_log.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace sjh {

std::string read_kernel_log(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        throw std::runtime_error(
            fmt::format("cannot read the kernel log '{}': {}", path, std::strerror(errno)));
    }
    struct stat st {};
    const bool records = ::fstat(fd, &st) == 0 && S_ISCHR(st.st_mode);
    std::string text;
    std::array<char, 8192> buf{};
    for (;;) {
        const auto n = ::read(fd, buf.data(), buf.size());
        if (n > 0) {
            text.append(buf.data(), static_cast<std::size_t>(n));
            if (records && text.back() != '\n') {
                text += '\n';
            }
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno == EPIPE) { // a record was overwritten while reading: skip it
            continue;
        }
        if (n < 0 && errno != EAGAIN) {
            const int err = errno;
            ::close(fd);
            throw std::runtime_error(
                fmt::format("cannot read the kernel log '{}': {}", path, std::strerror(err)));
        }
        break; // EOF or EAGAIN: no more records
    }
    ::close(fd);
    return text;
}

std::uint64_t kernel_clock_now_us() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000U +
           static_cast<std::uint64_t>(ts.tv_nsec) / 1000U;
}

} // namespace sjh
