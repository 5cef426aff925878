// SPDX-License-Identifier: Apache-2.0
// The node watch: how a step joins the kept namespace without checking every
// bind source again. Pure.
//
// slurmd (chroot.so's slurmd init) holds two notification queues for the
// node's life: an inotify instance and a fanotify instance that reports
// every mount attached to or detached from slurmd's mount namespace (Linux
// 6.15 and later). STATE/watch says where they are (WatchRecord). A step that
// checked everything fully (the stamp, node_stamp.hpp) arms the watch: it
// empties both queues, watches every node path the check looked at
// (watches_for), checks again, and, when nothing arrived meanwhile, writes
// STATE/armed (ArmedToken). The kernel queues an event when the system call
// that changes a path or a mount runs, so a later step that finds both queues
// empty and the token current knows nothing the stamp depends on changed on
// this node since: it joins without the full check. Anything queued, no
// watch, or a token that is not current means the full check, as before.
//
// What no queue on this node sees, and how it stays fresh instead:
//   - the jail itself, on a shared filesystem another node may change: every
//     step still finds the jail directory from the kernel's caches and
//     compares its identity and owner (a cache that expired sends the step to
//     the full check, which asks the server);
//   - the jail's loader cache (GPU nodes), the node's /proc options (a
//     remount), and the owners and modes above the jail on its server: the
//     token expires when the jail's filesystem is due to be asked again
//     (recheck= seconds after its last answer), so they reach the steps
//     within recheck= seconds.
#pragma once

#include "sjail/core/file_id.hpp"
#include "sjail/core/node/jail_probe.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjail {

// STATE/watch: slurmd's queues, as fd numbers in slurmd's process, and the
// mount namespace whose mounts the fanotify queue reports.
struct WatchRecord {
    std::int64_t pid = 0;
    int inotify_fd = -1;
    int fanotify_fd = -1;
    std::uint64_t mount_ns = 0; // inode of slurmd's /proc/PID/ns/mnt
    bool operator==(const WatchRecord &) const = default;
};

std::string format_watch_record(const WatchRecord &record);
// nullopt for anything but what format_watch_record wrote.
std::optional<WatchRecord> parse_watch_record(std::string_view text);

// STATE/armed: written after a full check with the watch in place.
struct ArmedToken {
    WatchRecord watch;
    std::int64_t until_s = 0;     // CLOCK_BOOTTIME seconds; the token is stale from then on
    std::uint64_t root_mount = 0; // the mount ID of "/" in the watched namespace
    std::string plugin;           // the plugin's version (its file is watched)
    std::string settings;         // fingerprint_digest(config)
    FileId jail;                  // the jail directory's identity
    std::string stamp;            // the kept namespace's stamp digest (stamp_digest)
    bool operator==(const ArmedToken &) const = default;
};

std::string format_armed_token(const ArmedToken &token);
// nullopt for anything but what format_armed_token wrote.
std::optional<ArmedToken> parse_armed_token(std::string_view text);

// What a step knows of itself without asking the filesystem.
struct StepView {
    std::int64_t now_s = 0;
    std::string plugin;
    std::string settings;
    // The mount ID of its "/": a mount belongs to one mount namespace, so the
    // same ID means the namespace whose mounts the queues watch, and the same root.
    std::uint64_t root_mount = 0;
};

// Whether `token` may stand in for the full check of a step seen as `step`:
// the same plugin and settings, the root mount of the namespace the queues
// watch, and not expired (a clock that went back counts as expired).
bool token_current(const ArmedToken &token, const StepView &step, int recheck_s);

// Until when a token armed at `now_s` may be used: until the jail's
// filesystem is due to be asked again (probe_due); 0 (do not arm) when it is
// due already, or with recheck=0.
std::int64_t armed_until(const std::optional<JailProbeMemo> &memo, std::int64_t now_s,
                         int recheck_s);

// A node path to watch and what for: `entries`: names created, removed or
// renamed in the directory; `self`: the file itself removed or renamed away
// (and, for a file, written or given another owner or mode); `modes`: the
// owner and mode of the directory (inotify reports those of its entries
// too, so only where a step checks them: above the jail).
struct WatchPath {
    std::string path;
    bool entries = false;
    bool self = false;
    bool modes = false;
    bool operator==(const WatchPath &) const = default;
};

// The watches that see every local change to where `checked` (absolute,
// normalised paths) resolve: each path itself, and the entries of every
// directory above it; the modes of the directories above each of
// `closed_paths` too (the jail, the state directory: a step checks that no
// user can write them). Directories at or below `own_dir` (the state
// directory, which the plugin itself writes) are not watched for entries.
// Sorted by path, one entry per path.
std::vector<WatchPath> watches_for(const std::vector<std::string> &checked,
                                   const std::string &own_dir,
                                   const std::vector<std::string> &closed_paths);

} // namespace sjail
