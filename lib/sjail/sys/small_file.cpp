// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/small_file.hpp"

#include <algorithm>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

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
    // Read straight into `text`, sized by the file where it says its size (a
    // step reads its small files in a fresh process, where every page first
    // touched costs a fault), else a page at a time (/proc files say 0).
    struct stat st {};
    const std::size_t told = ::fstat(fd, &st) == 0 && st.st_size > 0
                                 ? std::min(static_cast<std::size_t>(st.st_size), limit)
                                 : 0;
    const std::size_t chunk = told > 0 ? told + 1 : 4096;
    text.clear();
    while (true) {
        const std::size_t had = text.size();
        text.resize(had + chunk);
        const ssize_t n = ::read(fd, text.data() + had, chunk);
        text.resize(had + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return Status::from_errno("read " + shown);
        }
        if (n == 0) {
            return {};
        }
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

namespace {

// The directory a temp file for `path` goes in, and the temp name's template.
std::pair<std::string, std::string> temp_place(const std::string &path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) {
        return {".", "./." + path + ".tmp.XXXXXX"};
    }
    const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
    return {dir, path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".tmp.XXXXXX"};
}

// Writes all of `text`, going on after short writes and interruptions.
Status write_all(int fd, const std::string &shown, std::string_view text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return Status::from_errno("write " + shown);
        }
        done += static_cast<std::size_t>(n);
    }
    return {};
}

// Gives the temp file its mode and contents and puts them on disk.
Status fill_temp(int fd, const std::string &tmp, std::string_view text, mode_t mode) {
    if (::fchmod(fd, mode) != 0) {
        return Status::from_errno("set the mode of " + tmp);
    }
    if (auto s = write_all(fd, tmp, text); !s.ok()) {
        return s;
    }
    if (::fsync(fd) != 0) {
        return Status::from_errno("fsync " + tmp);
    }
    return {};
}

// Makes the rename itself durable; a directory that cannot be synced changes nothing.
void sync_directory(const std::string &dir) {
    const Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dfd.valid()) {
        (void)::fsync(dfd.get());
    }
}

} // namespace

Status write_file_atomically(const std::string &path, std::string_view text, mode_t mode) {
    auto [dir, tmp] = temp_place(path);
    // A fresh name (O_EXCL): nothing planted at a guessable name is followed,
    // and two writers of the same file never share a temp file.
    Fd fd(::mkostemp(tmp.data(), O_CLOEXEC));
    if (!fd.valid()) {
        return Status::from_errno("create a temp file in " + dir + " to replace " + path +
                                  " (the directory must exist and be writable)");
    }
    if (auto s = fill_temp(fd.get(), tmp, text, mode); !s.ok()) {
        (void)::unlink(tmp.c_str());
        return s;
    }
    fd.reset();
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        (void)::unlink(tmp.c_str());
        return Status::from_errno("rename " + tmp + " over " + path, err);
    }
    sync_directory(dir);
    return {};
}

} // namespace sjail
