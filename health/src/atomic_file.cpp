// SPDX-License-Identifier: Apache-2.0
#include "atomic_file.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace sjh {
namespace {

[[noreturn]] void fail(std::string_view what, const std::string &path, int err) {
    throw std::runtime_error(fmt::format("cannot {} '{}': {}", what, path, std::strerror(err)));
}

class Fd {
  public:
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    int get() const { return fd_; }

  private:
    int fd_;
};

} // namespace

void write_file_atomically(const std::string &path, std::string_view contents, unsigned mode) {
    const std::filesystem::path target(path);
    const auto dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    // A fresh name (O_EXCL): nothing planted at a guessable name is followed.
    std::string tmp = fmt::format("{}/.{}.tmp.XXXXXX", dir.string(), target.filename().string());
    {
        Fd fd(::mkostemp(tmp.data(), O_CLOEXEC));
        if (fd.get() < 0) {
            fail("create", tmp, errno);
        }
        if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) {
            const int err = errno;
            ::unlink(tmp.c_str());
            fail("set the mode of", tmp, err);
        }
        std::size_t done = 0;
        while (done < contents.size()) {
            const auto n = ::write(fd.get(), contents.data() + done, contents.size() - done);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                const int err = errno;
                ::unlink(tmp.c_str());
                fail("write", tmp, err);
            }
            done += static_cast<std::size_t>(n);
        }
        if (::fsync(fd.get()) != 0) {
            const int err = errno;
            ::unlink(tmp.c_str());
            fail("fsync", tmp, err);
        }
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail("rename a temp file over", path, err);
    }
    Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dfd.get() >= 0) {
        ::fsync(dfd.get());
    }
}

} // namespace sjh
