// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/run_view.hpp"

#include "sjail/core/path_rules.hpp"
#include "sjail/core/run_view.hpp"
#include "sjail/sys/fs_mount.hpp"
#include "sjail/sys/safe_open.hpp"

#include <cerrno>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace sjail {
namespace {

constexpr const char *kNodeRunInodes = "16384";

// One component below `dir`, staying on its filesystem: no symlink, no
// crossing into anything mounted there.
Fd open_here(int dir, const std::string &name) {
    return open_below(dir, name.c_str(), O_PATH | O_NOFOLLOW, Resolve::BeneathSameMount);
}

// mkdir NAME in DIR with exactly `mode` (the umask undone).
Status make_dir(int dir, const std::string &name, unsigned mode, const std::string &shown) {
    if (::mkdirat(dir, name.c_str(), mode) != 0 || ::fchmodat(dir, name.c_str(), mode, 0) != 0) {
        return Status::from_errno("making " + shown + " in the node's /run");
    }
    return {};
}

// The view's /run, which must be the node's tmpfs that mount_node_run made.
Status open_node_run(int view_root, Fd &out) {
    out = open_below(view_root, "run", O_PATH | O_DIRECTORY | O_NOFOLLOW, Resolve::Beneath);
    struct statfs fs {};
    struct stat st {};
    if (!out.valid() || ::fstatfs(out.get(), &fs) != 0 || ::fstat(out.get(), &st) != 0) {
        return Status::from_errno("opening the node's /run in the jail view");
    }
    if (fs.f_type != TMPFS_MAGIC || st.st_uid != 0 || (st.st_mode & 07777) != 0755) {
        return Status::failure("internal: /run in the jail view is not the node's own tmpfs");
    }
    return {};
}

} // namespace

Status mount_node_run(int view_root) {
    Fd target;
    if (auto s = open_mount_target(view_root, "/run", TargetType::Directory, target); !s.ok()) {
        return s;
    }
    const FsParam params[] = {
        {"mode", "0755"}, {"size", kNodeRunSize}, {"nr_inodes", kNodeRunInodes}};
    Fd run;
    if (auto s = make_mount("tmpfs", params, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, run); !s.ok()) {
        return Status::failure("creating the node's /run: " + s.message());
    }
    // Filled while detached: nothing else can reach it yet.
    for (const auto &dir : node_run_skeleton()) {
        if (auto s = make_dir(run.get(), dir.path.substr(std::string("/run/").size()), dir.mode,
                              dir.path);
            !s.ok()) {
            return s;
        }
    }
    if (::move_mount(run.get(), "", target.get(), "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return Status::from_errno("attaching the node's /run in the jail");
    }
    return {};
}

Status make_node_run_mount_point(int view_root, const std::string &target, TargetType type) {
    Fd current;
    if (auto s = open_node_run(view_root, current); !s.ok()) {
        return s;
    }
    const auto components = split_components(target);
    std::string shown = "/run";
    for (std::size_t i = 1; i < components.size(); ++i) {
        const std::string &name = components[i];
        shown += "/" + name;
        Fd next = open_here(current.get(), name);
        if (!next.valid() && errno != ENOENT) {
            return {}; // a symlink can't be here; a bind below /run is not ours to change
        }
        if (!next.valid()) {
            const bool last = i + 1 == components.size();
            if (last && type == TargetType::File) {
                const Fd file(::openat(current.get(), name.c_str(),
                                       O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644));
                if (!file.valid() || ::fchmod(file.get(), 0644) != 0) {
                    return Status::from_errno("making " + shown + " in the node's /run");
                }
                return {};
            }
            if (auto s = make_dir(current.get(), name, 0755, shown); !s.ok()) {
                return s;
            }
            next = open_here(current.get(), name);
            if (!next.valid()) {
                return Status::from_errno("opening " + shown + " in the node's /run");
            }
        }
        current = std::move(next);
    }
    return {};
}

} // namespace sjail
