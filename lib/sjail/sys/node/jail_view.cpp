// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/node/jail_view.hpp"

#include "sjail/core/node/jail_policy.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/sys/node/proc_options.hpp"
#include "sjail/sys/run_view.hpp"
#include "sjail/sys/safe_open.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sjail {
namespace {

Status mount_fresh_proc(int jail_root, const ProcOptions &options) {
    Fd target;
    if (auto s = open_mount_target(jail_root, "/proc", TargetType::Directory, target); !s.ok()) {
        return s;
    }
    Fd mnt;
    if (auto s = make_proc_mount(options, mnt); !s.ok()) {
        return Status::failure("mounting /proc (in a container, /proc must not be masked: "
                               "podman --security-opt unmask=ALL): " +
                               s.message());
    }
    if (::move_mount(mnt.get(), "", target.get(), "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return Status::from_errno("attaching /proc in the jail");
    }
    return {};
}

// `make_point`: the target lies in the node's fresh /run (run=node), where
// the plugin makes its mount point.
Status mount_bind(int jail_root, const MountOp &op, bool make_point) {
    const bool recursive = op.kind == MountKind::RecursiveBind;
    const unsigned rec = recursive ? AT_RECURSIVE : 0U;
    Fd source;
    if (auto s = open_bind_source(op.source, source); !s.ok()) {
        return s;
    }
    Fd tree(
        ::open_tree(source.get(), "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | rec));
    if (!tree.valid()) {
        return Status::from_errno("bind source " + op.source);
    }
    struct stat st {};
    if (::fstat(tree.get(), &st) != 0) {
        return Status::from_errno("fstat " + op.source);
    }
    Fd target;
    const TargetType type = S_ISDIR(st.st_mode) ? TargetType::Directory : TargetType::File;
    if (make_point) {
        if (auto s = make_node_run_mount_point(jail_root, op.target, type); !s.ok()) {
            return s;
        }
    }
    if (auto s = open_mount_target(jail_root, op.target, type, target); !s.ok()) {
        return s;
    }
    mount_attr attr{};
    attr.attr_set = (op.read_only ? MOUNT_ATTR_RDONLY : 0U) |
                    (op.nosuid_nodev ? (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) : 0U);
    if (attr.attr_set != 0 &&
        ::mount_setattr(tree.get(), "", AT_EMPTY_PATH | rec, &attr, sizeof(attr)) != 0) {
        return Status::from_errno("setting mount options on " + op.source);
    }
    if (::move_mount(tree.get(), "", target.get(), "",
                     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return Status::from_errno("mounting " + op.source + " on " + op.target + " in the jail");
    }
    return {};
}

Status mount_op(const Config &config, int jail_root, const MountOp &op) {
    switch (op.kind) {
    case MountKind::FreshProc:
        return mount_fresh_proc(jail_root, op.proc);
    case MountKind::FreshRun:
        return mount_node_run(jail_root);
    default:
        return mount_bind(jail_root, op, in_node_run(config.run, op.target));
    }
}

} // namespace

Status open_bind_source(const std::string &source, Fd &out) {
    if (auto s = open_node_path(source, out); !s.ok()) {
        if (s.message().ends_with("does not exist on this node")) {
            return Status::failure("bind source " + source + " is missing on this node (" +
                                   s.message() +
                                   "); create it, or remove its bind= from plugstack.conf");
        }
        return Status::failure("bind source " + source + ": " + s.message());
    }
    return {};
}

FileId file_id_of(const struct stat &st) {
    return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

Status check_jail_system_path(int jail_fd, const std::string &jail, const std::string &path) {
    const std::string relative = path == "/" ? "." : path.substr(1);
    // Links stay inside the jail.
    const Fd fd = open_below(jail_fd, relative.c_str(), O_PATH, Resolve::InRoot);
    if (!fd.valid()) {
        if (errno == ENOENT) {
            return {}; // nothing there to load
        }
        return Status::from_errno("jail " + jail + ": " + path);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        return Status::from_errno("jail " + jail + ": fstat " + path);
    }
    const std::string shown = jail + (path == "/" ? "" : path);
    if (auto s = check_root_owned(shown, st.st_uid, st.st_mode); !s.ok()) {
        return Status::failure(
            "jail " + jail + ": root processes on the node read " + path +
            " from the jail, so it must be owned by root and not writable by others: " +
            s.message());
    }
    return {};
}

Status check_jail_system_paths(int jail_fd, const std::string &jail) {
    for (const auto &path : jail_system_paths()) {
        if (auto s = check_jail_system_path(jail_fd, jail, path); !s.ok()) {
            return s;
        }
    }
    return {};
}

Status assemble_jail_view(const Config &config, const std::vector<MountOp> &plan, Fd &view) {
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
        return Status::from_errno("making the new namespace a slave of the host");
    }
    Fd jail;
    if (auto s = open_root_owned_dir(config.jail, jail); !s.ok()) {
        return Status::failure("jail " + config.jail + ": " + s.message());
    }
    if (auto s = check_jail_system_paths(jail.get(), config.jail); !s.ok()) {
        return s;
    }
    view.reset(::open_tree(jail.get(), "",
                           OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
    if (!view.valid() || ::move_mount(view.get(), "", jail.get(), "",
                                      MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        return Status::from_errno("binding the jail " + config.jail + " onto itself");
    }
    for (const auto &op : plan) {
        if (auto s = mount_op(config, view.get(), op); !s.ok()) {
            return s;
        }
    }
    return {};
}

Status pivot_into_view(int jail_root, FileId &root) {
    if (::fchdir(jail_root) != 0) {
        return Status::from_errno("chdir into the jail");
    }
    if (::syscall(SYS_pivot_root, ".", ".") != 0) {
        return Status::from_errno("pivot_root into the jail");
    }
    if (::umount2(".", MNT_DETACH) != 0) {
        return Status::from_errno("detaching the host root");
    }
    struct stat st {};
    if (::chdir("/") != 0 || ::stat("/", &st) != 0) {
        return Status::from_errno("chdir / in the jail");
    }
    root = file_id_of(st);
    return {};
}

Status build_jail_view(const Config &config, const std::vector<MountOp> &plan, FileId &root) {
    Fd view;
    if (auto s = assemble_jail_view(config, plan, view); !s.ok()) {
        return s;
    }
    return pivot_into_view(view.get(), root);
}

} // namespace sjail
