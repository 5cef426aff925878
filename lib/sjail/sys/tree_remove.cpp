// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/tree_remove.hpp"

#include "sjail/sys/fd.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace sjail {
namespace {

constexpr int kMaxDepth = 4096;

Status remove_contents(int dir_fd, dev_t dev, const std::string &shown, int depth);

Status remove_entry(int dir_fd, const char *name, dev_t dev, const std::string &shown, int depth) {
    struct stat st {};
    if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return errno == ENOENT ? Status() : Status::from_errno("stat " + shown + "/" + name);
    }
    if (!S_ISDIR(st.st_mode)) {
        if (::unlinkat(dir_fd, name, 0) != 0 && errno != ENOENT) {
            return Status::from_errno("unlink " + shown + "/" + name);
        }
        return {};
    }
    if (st.st_dev != dev) {
        return Status::failure(shown + "/" + name + " is a mount point; not removing through it");
    }
    Fd sub(::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub.valid()) {
        return Status::from_errno("open " + shown + "/" + name);
    }
    if (auto s = remove_contents(sub.get(), dev, shown + "/" + name, depth + 1); !s.ok()) {
        return s;
    }
    if (::unlinkat(dir_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
        return Status::from_errno("rmdir " + shown + "/" + name);
    }
    return {};
}

Status remove_contents(int dir_fd, dev_t dev, const std::string &shown, int depth) {
    if (depth > kMaxDepth) {
        return Status::failure(shown + " is nested too deeply to remove");
    }
    std::vector<std::string> names;
    {
        DIR *dir = ::fdopendir(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
        if (dir == nullptr) {
            return Status::from_errno("read " + shown);
        }
        while (const dirent *e = ::readdir(dir)) {
            const std::string name = e->d_name;
            if (name != "." && name != "..") {
                names.push_back(name);
            }
        }
        ::closedir(dir);
    }
    for (const auto &name : names) {
        if (auto s = remove_entry(dir_fd, name.c_str(), dev, shown, depth); !s.ok()) {
            return s;
        }
    }
    return {};
}

} // namespace

Status remove_tree(int parent_fd, const std::string &name) {
    struct stat parent {};
    if (::fstat(parent_fd, &parent) != 0) {
        return Status::from_errno("stat the parent of " + name);
    }
    return remove_entry(parent_fd, name.c_str(), parent.st_dev, "", 0);
}

} // namespace sjail
