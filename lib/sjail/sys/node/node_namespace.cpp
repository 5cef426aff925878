// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/node/node_namespace.hpp"

#include "sjail/core/node/generation_holds.hpp"
#include "sjail/core/node/mount_plan.hpp"
#include "sjail/core/node/node_stamp.hpp"
#include "sjail/sys/gpu/gpu_view.hpp"
#include "sjail/sys/node/builder.hpp"
#include "sjail/sys/node/generation_holds.hpp"
#include "sjail/sys/node/jail_generation.hpp"
#include "sjail/sys/node/node_stamp.hpp"
#include "sjail/sys/node/node_watch.hpp"
#include "sjail/sys/node/proc_options.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"
#include "sjail/sys/state_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sjail {
namespace {

// With STATE/lock held: the kept namespace when its stamp is `stamp`.
void join_if_current(const std::string &state, const std::string &stamp, Fd &out) {
    if (read_small_file(state + "/stamp") == stamp) {
        open_kept_namespace(state, out);
    }
}

// With STATE/lock held exclusively: build anew and record the stamp.
Status rebuild(const Config &config, CurrentStamp &now, NodeNamespace &out) {
    const std::string &state = config.state_dir;
    disarm_watch(config);
    if (auto s = make_private_mount(state); !s.ok()) {
        return s;
    }
    (void)::unlink((state + "/stamp").c_str());
    if (auto s = reset_namespace_file(state); !s.ok()) {
        return s;
    }
    if (auto s = ensure_root_dir(config.tmp_dir, 01777); !s.ok()) {
        return Status::failure("node-local tmp= directory: " + s.message());
    }
    // The volume's record names the generation before any step enters it,
    // so populate-jail --prune never deletes it under a step.
    if (auto s = save_hold(node_hold_path(state), config.jail_generation); !s.ok()) {
        return s;
    }
    if (auto s = record_generation_holds(config); !s.ok()) {
        return s;
    }
    ProcOptions proc;
    if (auto s = resolve_proc_options(config, proc); !s.ok()) {
        return s;
    }
    if (auto s = save_proc_options(config.state_dir, proc); !s.ok()) {
        return s;
    }
    // Identified before the build: a source or driver that changes while it
    // runs makes the stamp stale, so the next step builds again. The driver
    // is the one current_stamp found; the sources are identified again now
    // that the directories above exist.
    restamp_sources(config, now);
    if (auto s = build_node_namespace(config, build_mount_plan(config, proc), now.gpu.driver,
                                      now.jail, state + "/ns");
        !s.ok()) {
        return s;
    }
    if (!now.gpu.driver.memo.empty()) {
        // What the loader cache listed for the driver, keyed by the cache
        // file: it spares the next steps a read of the whole cache. (A
        // memo changes the stamp, so a changed one always comes here.)
        (void)write_file_atomically(driver_memo_path(config.state_dir), now.gpu.driver.memo);
    }
    if (auto s = write_file_atomically(state + "/stamp", now.stamp); !s.ok()) {
        return s;
    }
    join_if_current(state, now.stamp, out.fd);
    if (!out.fd.valid()) {
        return Status::failure("the jail namespace on " + state +
                               "/ns vanished right after it was built");
    }
    out.stamp = stamp_digest(now.stamp);
    return {};
}

// The full check: the stamp computed now, then the kept namespace joined
// when it has that stamp, else rebuilt.
Status acquire_checked(const Config &config, CurrentStamp &now, NodeNamespace &out) {
    // First, so that the first step's answer from the jail's filesystem is
    // kept there too (jail_probe.hpp).
    const std::string &state = config.state_dir;
    if (auto s = prepare_state_dir(state); !s.ok()) {
        return s;
    }
    if (auto s = current_stamp(config, now); !s.ok()) {
        return s;
    }
    out.jail = now.jail;
    Fd lock;
    if (auto s = lock_state(state, lock, LOCK_SH); !s.ok()) {
        return s;
    }
    join_if_current(state, now.stamp, out.fd);
    if (out.fd.valid()) {
        out.stamp = stamp_digest(now.stamp);
        return {};
    }
    if (auto s = lock_state(state, lock, LOCK_EX); !s.ok()) {
        return s;
    }
    join_if_current(state, now.stamp, out.fd); // another step may have rebuilt it meanwhile
    if (out.fd.valid()) {
        out.stamp = stamp_digest(now.stamp);
        return {};
    }
    return rebuild(config, now, out);
}

} // namespace

Status acquire_node_namespace(const Config &settings, NodeNamespace &out) {
    Config config;
    if (auto s = resolve_live_jail(settings, config); !s.ok()) {
        return s;
    }
    if (join_watched(config, out)) {
        out.generation = config.jail_generation;
        return {};
    }
    CurrentStamp now;
    if (auto s = acquire_checked(config, now, out); !s.ok()) {
        return s;
    }
    out.generation = config.jail_generation;
    arm_watch(config, now); // with STATE/lock released: arming takes it exclusively
    return {};
}

void forget_node_namespace(const Config &config) {
    Fd lock;
    if (lock_state(config.state_dir, lock, LOCK_EX).ok()) {
        disarm_watch(config);
        (void)::unlink((config.state_dir + "/stamp").c_str());
    }
}

Status release_node_namespace(const Config &config) {
    const std::string &state = config.state_dir;
    Fd lock;
    if (auto s = lock_state(state, lock, LOCK_EX); !s.ok()) {
        return s;
    }
    disarm_watch(config);
    (void)::unlink((state + "/stamp").c_str());
    if (::umount2((state + "/ns").c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0 && errno != EINVAL &&
        errno != ENOENT) {
        return Status::from_errno("unmount " + state + "/ns");
    }
    const std::string marker = state + "/self-bind";
    if (::access(marker.c_str(), F_OK) == 0) {
        lock.reset();
        if (::umount2(state.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0 && errno != EINVAL) {
            return Status::from_errno("unmount " + state);
        }
        (void)::unlink(marker.c_str());
    }
    return {};
}

} // namespace sjail
