// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/node/node_stamp.hpp"

#include "sjail/core/node/mount_plan.hpp"
#include "sjail/core/node/node_stamp.hpp"
#include "sjail/sys/cached_stat.hpp"
#include "sjail/sys/node/jail_probe.hpp"
#include "sjail/sys/node/jail_view.hpp"
#include "sjail/sys/node/proc_options.hpp"
#include "sjail/sys/safe_open.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace sjail {
namespace {

// The plugin itself: its version and the file it was loaded from, with that
// file's identity, so that an upgrade (a new file) rebuilds the namespace
// with the new plan.
std::string plugin_id() {
    std::string id = SJAIL_VERSION;
    const std::string file = plugin_file();
    struct stat st {};
    if (!file.empty() && ::stat(file.c_str(), &st) == 0) {
        id += " " + file + " " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + " " +
              std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
              std::to_string(st.st_mtim.tv_nsec);
    }
    return id;
}

// Every step identifies every bind source, so the usual case costs one call:
// a path without any symlink opens in one openat2. A path with a link (such
// as /etc/resolv.conf into /run) takes the component walk, which follows a
// link only below directories no user can write. Either way no link a user
// planted is followed.
Status open_source(const std::string &path, Fd &fd) {
    fd = open_below(AT_FDCWD, path.c_str(), O_PATH | O_NOFOLLOW, Resolve::NoSymlinks);
    return fd.valid() ? Status() : open_node_path(path, fd);
}

// What each bind source of the plan resolves to now. A missing source is
// recorded as such (the build then reports it properly).
std::vector<SourceId> identify_sources(const std::vector<MountOp> &plan) {
    std::vector<SourceId> ids;
    ids.reserve(plan.size());
    for (const auto &op : plan) {
        if (op.source.empty()) {
            continue;
        }
        SourceId id{op.source, {}, 0};
        Fd fd;
        struct statx stx {};
        if (open_source(op.source, fd).ok() &&
            ::statx(fd.get(), "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &stx) == 0) {
            id.id = {static_cast<std::uint64_t>(makedev(stx.stx_dev_major, stx.stx_dev_minor)),
                     stx.stx_ino};
            id.mount_id = stx.stx_mnt_id;
        }
        ids.push_back(id);
    }
    return ids;
}

// The jail's identity, walked with `attrs`; `not_cached`: the walk stopped
// where only the jail's server could answer.
Status identify_jail(const Config &config, FileId &jail, Fd *root, Attributes attrs,
                     bool *not_cached = nullptr) {
    Fd fd;
    if (auto s = open_root_owned_dir(config.jail, fd, attrs, not_cached); !s.ok()) {
        return Status::failure("jail " + config.jail + ": " + s.message());
    }
    struct stat st {};
    if (fstat_cached(fd.get(), st) != 0) {
        return Status::from_errno("fstat " + config.jail);
    }
    jail = file_id_of(st);
    if (root != nullptr) {
        *root = std::move(fd);
    }
    return {};
}

} // namespace

std::string plugin_file() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void *>(&plugin_file), &info) != 0 && info.dli_fname != nullptr) {
        return info.dli_fname;
    }
    return {};
}

Status find_jail(const Config &config, JailFilesystem &filesystem, FileId &id, Fd &root) {
    bool not_cached = false;
    Status identified = identify_jail(config, id, &root, Attributes::CachedOnly, &not_cached);
    if (identified.ok()) {
        return identified;
    }
    const Status answered = filesystem.asked() ? filesystem.last_answer() : filesystem.probe();
    if (!answered.ok() && filesystem.silent()) {
        // A jail the kernel could not find alone: the server's silence is the cause.
        return not_cached ? answered : identified;
    }
    // The server has just answered within build_timeout=, if only with an
    // error: the walk may ask it, and names what is wrong on the way.
    Status again = identify_jail(config, id, &root, Attributes::Cached);
    return again.ok() ? answered : again;
}

Status current_stamp(const Config &config, CurrentStamp &now) {
    // Everything here is node-local or in the kernel's caches; the jail's
    // server is asked only by a probe, under build_timeout=.
    JailFilesystem filesystem(config);
    Status answered = filesystem.check_answers();
    Fd jail;
    if (auto s = find_jail(config, filesystem, now.jail, jail); !s.ok()) {
        return s; // the jail's own problem, named as such
    }
    if (!answered.ok()) {
        return answered;
    }
    if (auto s = find_node_gpu(
            config, now.gpu,
            [&](std::string &line) { return filesystem.loader_line(jail.get(), line); });
        !s.ok()) {
        return s;
    }
    restamp_sources(config, now);
    return {};
}

void restamp_sources(const Config &config, CurrentStamp &now) {
    std::string node_proc;
    if (config.proc_options.empty() && !node_proc_super_options(node_proc).ok()) {
        node_proc = "unreadable"; // the build reads the whole mount table instead
    }
    now.stamp =
        namespace_stamp(config, plugin_id(), now.jail, identify_sources(build_mount_plan(config)),
                        now.gpu.stamp, node_proc);
}

} // namespace sjail
