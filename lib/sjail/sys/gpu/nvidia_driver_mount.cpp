// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/gpu/nvidia_driver_mount.hpp"

#include "sjail/sys/fs_mount.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/trusted_path.hpp"

#include <cerrno>
#include <fcntl.h>
#include <string>
#include <sys/mount.h>
#include <unistd.h>
#include <utility>

namespace sjail {
namespace {

Status mount_tmpfs(int target, Fd &mnt) {
    constexpr FsParam kParams[] = {{"mode", "0755"}, {"size", "1m"}};
    if (auto s = make_mount("tmpfs", kParams, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, mnt); !s.ok()) {
        return Status::failure("creating a tmpfs for the driver tree: " + s.message());
    }
    if (::move_mount(mnt.get(), "", target, "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return Status::from_errno("mounting the driver tree");
    }
    return {};
}

// Binds the file or directory behind `source` onto `target`.
Status bind_fd(int source, int target, bool read_only, const std::string &shown) {
    Fd tree(::open_tree(source, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
    if (!tree.valid()) {
        return Status::from_errno("cloning " + shown);
    }
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (read_only ? MOUNT_ATTR_RDONLY : 0U);
    if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH, &attr, sizeof(attr)) != 0) {
        return Status::from_errno("setting mount options on " + shown);
    }
    if (::move_mount(tree.get(), "", target, "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return Status::from_errno("binding " + shown);
    }
    return {};
}

// The driver file `i` as an fd this mount namespace can bind from. The fds
// from discovery serve when discovery ran in this namespace; after an
// unshare they belong to the old one (open_tree refuses them), so the file
// is opened again with the same checks and must still be what discovery saw.
Status source_fd(const NodeDriver &driver, std::size_t i, Fd &reopened, int &fd) {
    const DriverFile &file = driver.files.at(i);
    fd = driver.fds.at(i).get();
    const Fd probe(::open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
    if (probe.valid()) {
        return {};
    }
    if (errno != EINVAL) {
        return Status::from_errno("cloning " + file.node_path);
    }
    TrustedOpen opened;
    const auto kind =
        file.kind == DriverFileKind::IpcDir ? TrustedKind::Directory : TrustedKind::File;
    if (auto s = open_trusted_on_node(file.node_path, kind, opened); !s.ok()) {
        return Status::failure("the NVIDIA driver changed since it was found: " + s.message());
    }
    if (!(file_identity(opened.st) == file.identity)) {
        return Status::failure("the NVIDIA driver changed since it was found: " + file.node_path +
                               " is another file now (an upgrade under way?); try again");
    }
    reopened = std::move(opened.fd);
    fd = reopened.get();
    return {};
}

// True when `target` does not exist in the view (the jail has no mount point
// for it). Anything else, symlinks included, is left to open_mount_target.
bool missing_in_view(int view_root, const std::string &target) {
    const std::string rel = target.substr(1);
    const Fd fd = open_below(view_root, rel.c_str(), O_PATH | O_NOFOLLOW, Resolve::Beneath);
    return !fd.valid() && errno == ENOENT;
}

// "/usr/local/nvidia/lib64/x" -> "lib64/x" below the tree.
std::string in_tree(const DriverPlan &plan, const std::string &path) {
    return path.substr(plan.tree.size() + 1);
}

Status fill_tree(int tree, const DriverPlan &plan, const NodeDriver &driver) {
    for (const auto &dir : plan.directories) {
        if (::mkdirat(tree, in_tree(plan, dir).c_str(), 0755) != 0) {
            return Status::from_errno("mkdir " + dir + " in the driver tree");
        }
    }
    for (const auto &link : plan.links) {
        if (::symlinkat(link.target.c_str(), tree, in_tree(plan, link.path).c_str()) != 0) {
            return Status::from_errno("symlink " + link.path);
        }
    }
    for (const auto &bind : plan.binds) {
        if (!bind.in_tree) {
            continue;
        }
        const std::string rel = in_tree(plan, bind.target);
        Fd point(::openat(tree, rel.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW,
                          0444));
        if (!point.valid()) {
            return Status::from_errno("mount point " + bind.target);
        }
        Fd target(::openat(tree, rel.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW));
        if (!target.valid()) {
            return Status::from_errno("mount point " + bind.target);
        }
        const auto &file = driver.files.at(bind.file);
        Fd reopened;
        int source = -1;
        if (auto s = source_fd(driver, bind.file, reopened, source); !s.ok()) {
            return s;
        }
        if (auto s = bind_fd(source, target.get(), bind.read_only,
                             file.node_path + " on " + bind.target);
            !s.ok()) {
            return s;
        }
    }
    return {};
}

} // namespace

Status mount_driver_view(int view_root, const DriverPlan &plan, const NodeDriver &driver,
                         std::vector<std::string> &notes, std::vector<std::size_t> &skipped) {
    if (driver.files.size() != driver.fds.size()) {
        return Status::failure("internal: driver files and fds differ in number");
    }
    Fd target;
    if (auto s = open_mount_target(view_root, plan.tree, TargetType::Directory, target); !s.ok()) {
        return Status::failure("the NVIDIA driver tree: " + s.message());
    }
    Fd tree;
    if (auto s = mount_tmpfs(target.get(), tree); !s.ok()) {
        return s;
    }
    if (auto s = fill_tree(tree.get(), plan, driver); !s.ok()) {
        return s;
    }
    mount_attr ro{};
    ro.attr_set = MOUNT_ATTR_RDONLY;
    if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH, &ro, sizeof(ro)) != 0) {
        return Status::from_errno("making the driver tree read-only");
    }
    for (std::size_t i = 0; i < plan.binds.size(); ++i) {
        const auto &bind = plan.binds[i];
        if (bind.in_tree) {
            continue;
        }
        const auto &file = driver.files.at(bind.file);
        const auto type =
            file.kind == DriverFileKind::IpcDir ? TargetType::Directory : TargetType::File;
        if (missing_in_view(view_root, bind.target)) {
            notes.push_back(bind.missing_note);
            skipped.push_back(i);
            continue;
        }
        // Optional: a mount point that is a symlink, of the wrong kind or
        // not root's is skipped, never followed.
        Fd point;
        if (auto s = open_mount_target(view_root, bind.target, type, point); !s.ok()) {
            notes.push_back(unusable_mount_point_note(bind, file, s.message()));
            skipped.push_back(i);
            continue;
        }
        Fd reopened;
        int source = -1;
        if (auto s = source_fd(driver, bind.file, reopened, source); !s.ok()) {
            return s;
        }
        if (auto s =
                bind_fd(source, point.get(), bind.read_only, file.node_path + " on " + bind.target);
            !s.ok()) {
            return s;
        }
    }
    return {};
}

} // namespace sjail
