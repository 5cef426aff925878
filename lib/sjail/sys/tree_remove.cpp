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

// How many directory levels are held open at once. A directory deeper than
// this is moved up to the top of the tree (renameat between two held
// directory fds) and removed from there later, so any depth a user makes
// costs at most this many file descriptors and this much stack.
constexpr int kHeldLevels = 32;

struct Removal {
    int top = -1;                      // the tree's top directory
    dev_t dev = 0;                     // the filesystem it must not leave
    std::string shown;                 // its path, for messages
    std::vector<std::string> deferred; // directories moved up to `top`
    unsigned moved = 0;                // names given so far
    Status first_error;                // removal goes on past an error
};

void note_error(Removal &r, const Status &s) {
    if (r.first_error.ok()) {
        r.first_error = s;
    }
}

std::vector<std::string> names_in(int dir_fd, const std::string &shown, Removal &r) {
    std::vector<std::string> names;
    DIR *dir = ::fdopendir(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
    if (dir == nullptr) {
        note_error(r, Status::from_errno("read " + shown));
        return names;
    }
    while (const dirent *e = ::readdir(dir)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") {
            names.push_back(name);
        }
    }
    ::closedir(dir);
    return names;
}

void remove_contents(int dir_fd, const std::string &shown, int depth, Removal &r);

// Removes `name` in `dir_fd` (at `depth` below the top), or moves a
// directory too deep to hold to the top, to be removed from there.
void remove_entry(int dir_fd, const std::string &name, const std::string &shown, int depth,
                  Removal &r) {
    const std::string path = shown + "/" + name;
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT) {
            note_error(r, Status::from_errno("stat " + path));
        }
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (::unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT) {
            note_error(r, Status::from_errno("unlink " + path));
        }
        return;
    }
    if (st.st_dev != r.dev) {
        note_error(r, Status::failure(path + " is a mount point; not removing through it"));
        return;
    }
    if (depth >= kHeldLevels && dir_fd != r.top) {
        const std::string moved = ".sjail-deep-" + std::to_string(r.moved++);
        if (::renameat(dir_fd, name.c_str(), r.top, moved.c_str()) != 0) {
            note_error(r, Status::from_errno("move " + path + " up to " + r.shown));
            return;
        }
        r.deferred.push_back(moved);
        return;
    }
    Fd sub(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub.valid()) {
        note_error(r, Status::from_errno("open " + path));
        return;
    }
    remove_contents(sub.get(), path, depth + 1, r);
    if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
        note_error(r, Status::from_errno("rmdir " + path));
    }
}

void remove_contents(int dir_fd, const std::string &shown, int depth, Removal &r) {
    for (const auto &name : names_in(dir_fd, shown, r)) {
        remove_entry(dir_fd, name, shown, depth, r);
    }
}

} // namespace

Status remove_tree(int parent_fd, const std::string &name) {
    struct stat parent {};
    if (::fstat(parent_fd, &parent) != 0) {
        return Status::from_errno("stat the parent of " + name);
    }
    struct stat st {};
    if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return errno == ENOENT ? Status() : Status::from_errno("stat " + name);
    }
    if (!S_ISDIR(st.st_mode)) {
        if (::unlinkat(parent_fd, name.c_str(), 0) != 0 && errno != ENOENT) {
            return Status::from_errno("unlink " + name);
        }
        return {};
    }
    if (st.st_dev != parent.st_dev) {
        return Status::failure(name + " is a mount point; not removing through it");
    }
    Fd top(::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!top.valid()) {
        return Status::from_errno("open " + name);
    }
    Removal r;
    r.top = top.get();
    r.dev = parent.st_dev;
    r.shown = name;
    remove_contents(top.get(), name, 0, r);
    // Each directory moved up is removed from the top; what lies deeper in
    // it is moved up in turn, so this ends when every directory is gone.
    while (!r.deferred.empty()) {
        const std::string moved = r.deferred.back();
        r.deferred.pop_back();
        remove_entry(top.get(), moved, name, 1, r);
    }
    top.reset();
    if (!r.first_error.ok()) {
        return r.first_error;
    }
    if (::unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
        return Status::from_errno("rmdir " + name);
    }
    return {};
}

} // namespace sjail
