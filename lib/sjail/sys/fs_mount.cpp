// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/fs_mount.hpp"

#include <cerrno>
#include <string>
#include <sys/mount.h>
#include <unistd.h>

namespace sjail {
namespace {

// The filesystem context, closed on scope exit without touching errno.
class Context {
  public:
    explicit Context(int fd) noexcept : fd_(fd) {}
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;
    ~Context() {
        if (fd_ >= 0) {
            const int err = errno;
            ::close(fd_);
            errno = err;
        }
    }
    [[nodiscard]] int get() const noexcept { return fd_; }

  private:
    int fd_;
};

// "tmpfs (mode=0755,size=1m)", for messages.
std::string describe(const char *fstype, std::span<const FsParam> params) {
    std::string text = std::string(fstype) + " (";
    for (const auto &param : params) {
        text += std::string(&param == params.data() ? "" : ",") + param.key + "=" + param.value;
    }
    return text + ")";
}

} // namespace

Fd make_mount(const char *fstype, std::span<const FsParam> params, unsigned attrs) noexcept {
    const Context fs(::fsopen(fstype, FSOPEN_CLOEXEC));
    if (fs.get() < 0) {
        return Fd();
    }
    for (const auto &param : params) {
        if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, param.key, param.value, 0) != 0) {
            return Fd();
        }
    }
    if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) {
        return Fd();
    }
    return Fd(::fsmount(fs.get(), FSMOUNT_CLOEXEC, attrs));
}

Status make_mount(const char *fstype, std::span<const FsParam> params, unsigned attrs, Fd &out) {
    out = make_mount(fstype, params, attrs);
    if (!out.valid()) {
        return Status::from_errno("a new " + describe(fstype, params));
    }
    return {};
}

} // namespace sjail
