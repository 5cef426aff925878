// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/plugstack.hpp"

#include "sjail/sys/fd.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <utility>

namespace sjail {
namespace {

constexpr std::size_t kMaxFileSize = 4U << 20U;

// The file being read, and the include line that led to it.
struct Frame {
    std::string path;
    std::string origin; // "FILE:LINE" of the include line; "" for plugstack.conf itself
    dev_t dev = 0;
    ino_t ino = 0;
};

struct Reader {
    PlugstackRead &out;
    std::vector<Frame> stack;
};

class Glob {
  public:
    explicit Glob(const std::string &pattern) : rc_(::glob(pattern.c_str(), 0, nullptr, &g_)) {}
    Glob(const Glob &) = delete;
    Glob &operator=(const Glob &) = delete;
    Glob(Glob &&) = delete;
    Glob &operator=(Glob &&) = delete;
    ~Glob() { ::globfree(&g_); }

    [[nodiscard]] int rc() const { return rc_; }
    [[nodiscard]] std::vector<std::string> matches() const {
        return rc_ == 0 ? std::vector<std::string>(g_.gl_pathv, g_.gl_pathv + g_.gl_pathc)
                        : std::vector<std::string>();
    }

  private:
    glob_t g_{};
    int rc_;
};

bool fail(Reader &r, std::string cause, std::string fix) {
    r.out.cause = std::move(cause);
    r.out.fix = std::move(fix);
    return false;
}

// " (included by FILE:LINE)", or "" for plugstack.conf itself.
std::string by(const std::string &origin) {
    return origin.empty() ? "" : " (included by " + origin + ")";
}

std::string chain(const Reader &r, const std::string &last) {
    std::string out;
    for (const auto &frame : r.stack) {
        out += frame.path + " -> ";
    }
    return out + last;
}

// A file that only root can change, or the reason it is not.
bool check_owner(Reader &r, const std::string &path, const std::string &origin,
                 const struct stat &st) {
    if (!S_ISREG(st.st_mode)) {
        return fail(r, path + by(origin) + " is not a regular file",
                    "replace it by a regular file owned by root");
    }
    if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return fail(r,
                    path + by(origin) +
                        (st.st_uid != 0 ? " is owned by uid " + std::to_string(st.st_uid)
                                        : std::string(" is writable by group or others")) +
                        "; plugstack.conf and the files it includes must be owned by root and "
                        "not writable by group or others",
                    "chown root: " + path + "; chmod go-w " + path);
    }
    return true;
}

// Opens `path` without following a symlink a user could have planted.
bool open_file(Reader &r, const std::string &path, const std::string &origin, Fd &out) {
    Fd where;
    if (auto s = open_node_path(path, where); !s.ok()) {
        return fail(r, "cannot read " + path + by(origin) + ": " + s.message(),
                    origin.empty() ? "create it, owned by root, with the node's chroot.so line "
                                     "(\"required chroot.so jail=DIR ...\", see chroot.so(8))"
                                   : "make the path root's, or change the include line");
    }
    struct stat st {};
    if (::fstat(where.get(), &st) != 0) {
        return fail(r, Status::from_errno("fstat " + path).message(), "check the file system");
    }
    if (!check_owner(r, path, origin, st)) {
        return false;
    }
    const std::string self = "/proc/self/fd/" + std::to_string(where.get());
    out.reset(::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!out.valid()) {
        return fail(r, Status::from_errno("open " + path + by(origin)).message(),
                    "make it readable by root (is /proc mounted?)");
    }
    return true;
}

bool read_file(Reader &r, const std::string &path, const std::string &origin);

// A match Slurm reads as empty: a directory, or a name that no longer
// exists (a dangling symlink). Notes it and returns true.
bool read_as_empty(Reader &r, const std::string &path, const std::string &origin) {
    struct stat st {};
    const bool missing = ::stat(path.c_str(), &st) != 0 && errno == ENOENT;
    if (!missing && !S_ISDIR(st.st_mode)) {
        return false;
    }
    r.out.notes.push_back(
        {path + " (matched by " + origin + ") " +
             (missing ? "does not exist (a dangling symlink?)" : "is a directory") +
             "; Slurm reads nothing from it",
         "remove it, or change the include pattern so that it matches files only"});
    return true;
}

bool follow_include(Reader &r, const IncludeLine &include) {
    const Glob found(include.pattern);
    if (found.rc() == GLOB_NOMATCH) {
        r.out.empty_includes.push_back(include.origin + ": include " + include.pattern);
        return true;
    }
    if (found.rc() != 0) {
        return fail(r, include.origin + ": cannot expand include " + include.pattern,
                    "check that its directories can be read");
    }
    for (const auto &path : found.matches()) {
        if (!read_as_empty(r, path, include.origin) && !read_file(r, path, include.origin)) {
            return false;
        }
    }
    return true;
}

// Whether `st` is a file being read already (an include loop).
bool in_stack(const Reader &r, const struct stat &st) {
    for (const auto &frame : r.stack) {
        if (frame.dev == st.st_dev && frame.ino == st.st_ino) {
            return true;
        }
    }
    return false;
}

bool check_nesting(Reader &r, const std::string &path, const std::string &origin,
                   const struct stat &st) {
    if (in_stack(r, st)) {
        return fail(r,
                    origin + ": an include loop: " + chain(r, path) +
                        "; Slurm would read them until it runs out of files",
                    "remove the include line that leads back to " + path);
    }
    if (r.stack.size() >= static_cast<std::size_t>(kPlugstackMaxDepth)) {
        return fail(r,
                    origin + ": includes nest more than " + std::to_string(kPlugstackMaxDepth) +
                        " files deep: " + chain(r, path),
                    "include the files from fewer levels");
    }
    if (r.out.files.size() >= kPlugstackMaxFiles) {
        return fail(r,
                    origin + ": plugstack.conf and its includes name more than " +
                        std::to_string(kPlugstackMaxFiles) + " files",
                    "include fewer files");
    }
    return true;
}

bool read_entries(Reader &r, const std::string &text, const std::string &path) {
    auto parsed = parse_plugstack(text, path);
    for (auto &note : parsed.notes) {
        r.out.notes.push_back(std::move(note));
    }
    for (auto &entry : parsed.entries) {
        if (auto *plugin = std::get_if<PluginLine>(&entry)) {
            r.out.plugins.push_back(std::move(*plugin));
        } else if (!follow_include(r, std::get<IncludeLine>(entry))) {
            return false;
        }
    }
    return true;
}

bool read_file(Reader &r, const std::string &path, const std::string &origin) {
    Fd fd;
    struct stat st {};
    if (!open_file(r, path, origin, fd)) {
        return false;
    }
    if (::fstat(fd.get(), &st) != 0) {
        return fail(r, Status::from_errno("fstat " + path).message(), "check the file system");
    }
    if (!check_owner(r, path, origin, st) || !check_nesting(r, path, origin, st)) {
        return false;
    }
    std::string text;
    if (auto s = read_whole_file(fd.get(), path, text, kMaxFileSize); !s.ok()) {
        return fail(r, s.message() + by(origin), "make it a plugstack.conf of a few lines");
    }
    fd.reset();
    r.out.files.push_back(path);
    r.stack.push_back({path, origin, st.st_dev, st.st_ino});
    const bool ok = read_entries(r, text, path);
    r.stack.pop_back();
    return ok;
}

} // namespace

Status PlugstackRead::status() const {
    return cause.empty() ? Status() : Status::failure(cause + "; " + fix);
}

PlugstackRead read_plugstack(const std::string &path) {
    PlugstackRead out;
    Reader r{out, {}};
    (void)read_file(r, path, "");
    return out;
}

} // namespace sjail
