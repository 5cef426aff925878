// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/small_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sjail {

Fd open_regular(const std::string &path, int flags, mode_t mode) {
    Fd fd(::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode));
    struct stat st {};
    if (fd.valid() && (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))) {
        fd.reset();
        errno = EINVAL;
    }
    return fd;
}

Status read_whole_file(int fd, const std::string &shown, std::string &text, std::size_t limit) {
    text.clear();
    char buf[65536];
    while (true) {
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return Status::from_errno("read " + shown);
        }
        if (n == 0) {
            return {};
        }
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > limit) {
            return Status::failure(shown + " is larger than " + std::to_string(limit) +
                                   " bytes; it is not what it should be");
        }
    }
}

std::string read_small_file(const std::string &path, std::size_t limit) {
    const Fd fd = open_regular(path, O_RDONLY);
    std::string text;
    if (!fd.valid() || !read_whole_file(fd.get(), path, text, limit).ok()) {
        return "";
    }
    return text;
}

Status write_file_atomically(const std::string &path, const std::string &text) {
    const std::string tmp = path + ".tmp";
    (void)::unlink(tmp.c_str());
    Fd fd(::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid() ||
        ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
        return Status::from_errno("write " + tmp);
    }
    fd.reset();
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        return Status::from_errno("rename " + tmp);
    }
    return {};
}

} // namespace sjail
