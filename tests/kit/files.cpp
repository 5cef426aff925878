// SPDX-License-Identifier: Apache-2.0
#include "kit/files.hpp"

#include "sjail/core/path_rules.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace kit {

std::string errno_text(const std::string &what) {
    return what + ": " + std::strerror(errno);
}

std::string mkdir_p(const std::string &path, mode_t mode) {
    std::string sofar;
    for (const auto &part : sjail::split_components(path)) {
        sofar += "/" + part;
        if (::mkdir(sofar.c_str(), 0755) != 0 && errno != EEXIST) {
            return errno_text("mkdir " + sofar);
        }
    }
    if (::chmod(path.c_str(), mode) != 0) {
        return errno_text("chmod " + path);
    }
    return "";
}

std::string write_file(const std::string &path, const std::string &text) {
    std::ofstream out(path);
    out << text;
    return out ? "" : "cannot write " + path;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

namespace {

// Moves exactly `size` bytes with `io` (::read or ::write), retrying on EINTR
// and short counts.
template <typename Io, typename Byte> bool transfer_all(Io io, int fd, Byte *p, std::size_t size) {
    while (size > 0) {
        const ssize_t n = io(fd, p, size);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

} // namespace

bool write_all(int fd, const void *data, std::size_t size) {
    return transfer_all(::write, fd, static_cast<const char *>(data), size);
}

bool read_all(int fd, void *data, std::size_t size) {
    return transfer_all(::read, fd, static_cast<char *>(data), size);
}

std::string read_to_end(int fd) {
    std::string text;
    char buf[512];
    ssize_t n = 0;
    while ((n = ::read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
    return text;
}

} // namespace kit
