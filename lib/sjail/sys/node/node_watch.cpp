// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/node/node_watch.hpp"

#include "sjail/core/fingerprint.hpp"
#include "sjail/core/node/mount_plan.hpp"
#include "sjail/core/node/node_stamp.hpp"
#include "sjail/core/node/node_watch.hpp"
#include "sjail/core/proc_stat.hpp"
#include "sjail/sys/gpu/gpu_view.hpp"
#include "sjail/sys/node/jail_probe.hpp"
#include "sjail/sys/process_scan.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"
#include "sjail/sys/state_dir.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/fanotify.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

// Linux 6.15's mount notifications; Debian 12's and 13's headers predate them.
#ifndef FAN_REPORT_MNT
#define FAN_REPORT_MNT 0x00004000
#endif
#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110
#endif
#ifndef FAN_MNT_ATTACH
#define FAN_MNT_ATTACH 0x01000000
#endif
#ifndef FAN_MNT_DETACH
#define FAN_MNT_DETACH 0x02000000
#endif
#ifndef FAN_EVENT_INFO_TYPE_MNT
#define FAN_EVENT_INFO_TYPE_MNT 7
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U // Linux 6.8
#endif

namespace sjail {
namespace {

// A directory's own events; IN_ATTRIB and IN_MODIFY on a directory report
// its entries' too, so they are asked for only where they matter.
constexpr std::uint32_t kGoneEvents = IN_DELETE_SELF | IN_MOVE_SELF;
constexpr std::uint32_t kEntryEvents = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;
constexpr std::uint32_t kFileEvents = IN_ATTRIB | IN_MODIFY;

constexpr std::size_t kTokenLimit = 4096;
// The kept namespace's stamp: a line per bind source.
constexpr std::size_t kStampLimit = 1UL << 20;

std::string watch_path(const Config &config) {
    return config.state_dir + "/watch";
}

std::string armed_path(const Config &config) {
    return config.state_dir + "/armed";
}

bool mount_namespace_of(const char *ns_file, std::uint64_t &ino) {
    struct stat st {};
    if (::stat(ns_file, &st) != 0) {
        return false;
    }
    ino = st.st_ino;
    return true;
}

// The mount ID of "/" (never reused since Linux 6.8; the fast path needs 6.15).
bool root_mount_of(std::uint64_t &id) {
    struct statx stx {};
    if (::statx(AT_FDCWD, "/", AT_STATX_DONT_SYNC, STATX_MNT_ID_UNIQUE, &stx) != 0 ||
        (stx.stx_mask & STATX_MNT_ID_UNIQUE) == 0) {
        return false;
    }
    id = stx.stx_mnt_id;
    return true;
}

bool view_of_this_step(const Config &config, StepView &view) {
    view.now_s = boot_seconds();
    view.plugin = SJAIL_VERSION; // its file is watched
    view.settings = fingerprint_digest(config);
    return root_mount_of(view.root_mount);
}

// STATE/armed as only root can have written it: a regular file of root's,
// closed to others (a state directory users could write is refused by
// every full check, and cannot hold a token of root's they made).
std::optional<ArmedToken> read_token(const Config &config) {
    const Fd fd(::open(armed_path(config).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
        (st.st_mode & 077) != 0 || st.st_size <= 0 ||
        static_cast<std::size_t>(st.st_size) > kTokenLimit) {
        return std::nullopt;
    }
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    if (::read(fd.get(), text.data(), text.size()) != st.st_size) {
        return std::nullopt;
    }
    return parse_armed_token(text);
}

// slurmd's queues, duplicated into this process (the same open files: what
// this process reads or watches, slurmd's queue reads or watches).
struct Queues {
    Fd inotify;
    Fd fanotify;
};

std::string link_of(const std::string &path) {
    std::array<char, 128> target{};
    const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    return n > 0 ? std::string(target.data(), static_cast<std::size_t>(n)) : std::string();
}

// Whether process `pid` holds the queues `record` names: an inotify
// instance and a fanotify instance that watches the record's mount namespace,
// at those descriptors.
bool holds_queues(std::int64_t pid, const WatchRecord &record) {
    const std::string proc = "/proc/" + std::to_string(pid);

    const std::string fanotify = std::to_string(record.fanotify_fd);
    return link_of(proc + "/fd/" + std::to_string(record.inotify_fd)) == "anon_inode:inotify" &&
           link_of(proc + "/fd/" + fanotify) == "anon_inode:[fanotify]" &&
           read_small_file(proc + "/fdinfo/" + fanotify)
                   .find("fanotify mnt_ns:" + std::to_string(record.mount_ns) + " ") !=
               std::string::npos;
}

// Takes the queues from the process `record` names, once it is checked to
// hold them: a pid reused within the token's life (a user's process with an
// inotify and a fanotify instance at those numbers) is refused. Checked after
// the pidfd pins the process: if that one ended meanwhile, pidfd_getfd fails.
bool open_queues(const WatchRecord &record, Queues &out) {
    const Fd slurmd(static_cast<int>(::syscall(SYS_pidfd_open, record.pid, 0)));
    if (!slurmd.valid() || !holds_queues(record.pid, record)) {
        return false;
    }
    out.inotify.reset(
        static_cast<int>(::syscall(SYS_pidfd_getfd, slurmd.get(), record.inotify_fd, 0)));
    out.fanotify.reset(
        static_cast<int>(::syscall(SYS_pidfd_getfd, slurmd.get(), record.fanotify_fd, 0)));
    return out.inotify.valid() && out.fanotify.valid();
}

// The process that holds slurmd's queues now: the one that opened them, or,
// once slurmd has daemonized (it loads its plugins first), the process it
// became, which inherited them. Its own short-lived children inherit them
// too until they exec, so the oldest holder is taken.
std::optional<std::int64_t> find_holder(const WatchRecord &record) {
    if (holds_queues(record.pid, record)) {
        return record.pid;
    }
    std::optional<std::int64_t> oldest;
    std::uint64_t oldest_start = 0;
    for_each_process([&](std::int64_t pid, const std::string & /*dir*/) {
        if (holds_queues(pid, record)) {
            const std::uint64_t start =
                start_time_of_stat(read_small_file("/proc/" + std::to_string(pid) + "/stat"))
                    .value_or(0);
            if (!oldest || start < oldest_start) {
                oldest = pid;
                oldest_start = start;
            }
        }
        return true;
    });
    return oldest;
}

bool queued(int fd) {
    int bytes = 0;
    return ::ioctl(fd, FIONREAD, &bytes) != 0 || bytes != 0;
}

bool anything_queued(const Queues &queues) {
    return queued(queues.inotify.get()) || queued(queues.fanotify.get());
}

void drain(int fd) {
    std::array<char, 16384> events{};
    while (queued(fd) && ::read(fd, events.data(), events.size()) > 0) {
    }
}

// Where `path` resolves now, when that differs from `path` (a link on the
// way): followed as a bind source is (open_node_path), only to watch it.
void add_resolved(std::vector<std::string> &paths, const std::string &path) {
    paths.push_back(path);
    Fd fd;
    if (!open_node_path(path, fd).ok()) {
        return;
    }
    std::array<char, PATH_MAX> target{};
    const std::string link = "/proc/self/fd/" + std::to_string(fd.get());
    const ssize_t n = ::readlink(link.c_str(), target.data(), target.size() - 1);
    if (n <= 0 || target[0] != '/') {
        return;
    }
    std::string resolved(target.data(), static_cast<std::size_t>(n));
    if (resolved != path) {
        paths.push_back(std::move(resolved));
    }
}

// Every node path the full check looks at: the jail, the plugin file, each
// bind source, and, unless gpu=off, where the driver is looked for and what
// was found.
std::vector<std::string> checked_paths(const Config &config, const CurrentStamp &now) {
    // The state directory's files a full check reads: one replaced (by root:
    // the directory is closed) is seen as the full check would see it. The
    // jail's filesystem's last answer too: dropped (a failed probe, or an
    // admin wanting the jail asked now), the next step asks the server.
    std::vector<std::string> paths = {config.jail,
                                      config.state_dir,
                                      config.state_dir + "/stamp",
                                      config.state_dir + "/lock",
                                      config.state_dir + "/ns",
                                      config.state_dir + "/jail-probe"};
    if (const std::string plugin = plugin_file(); plugin.starts_with('/')) {
        paths.push_back(plugin);
    }
    for (const auto &op : build_mount_plan(config)) {
        if (!op.source.empty()) {
            add_resolved(paths, op.source);
        }
    }
    if (config.gpu == GpuMode::Off) {
        return paths;
    }
    const DriverSearch search = driver_search_for(config);
    for (const auto &root : search.roots) {
        const std::string base = root == "/" ? "" : root;
        paths.push_back(root);
        for (const char *below :
             {"/etc/ld.so.cache", "/lib64", "/lib", "/bin", "/share", "/usr/bin", "/usr/share"}) {
            paths.push_back(base + below);
        }
    }
    paths.push_back(search.mps_pipe_dir);
    paths.push_back(config.jail + "/etc/ld.so.cache"); // changed from this node; others: until_s
    for (const auto &file : now.gpu.driver.files) {
        add_resolved(paths, file.node_path);
    }
    return paths;
}

// Watches each path that the kernel can find from its caches alone (a
// network filesystem's server is never asked here; what is not cached is
// left to the token's expiry).
void add_watches(int inotify, const std::vector<WatchPath> &watches) {
    for (const auto &watch : watches) {
        const Fd fd = open_below(AT_FDCWD, watch.path.c_str(), O_PATH | O_NOFOLLOW,
                                 Resolve::NoSymlinksCached);
        if (!fd.valid()) {
            continue;
        }
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0) {
            continue;
        }
        const bool file = !S_ISDIR(st.st_mode);
        const std::uint32_t mask = kGoneEvents | (watch.entries ? kEntryEvents : 0U) |
                                   (watch.self && file ? kFileEvents : 0U) |
                                   (watch.modes ? IN_ATTRIB : 0U);
        const std::string magic = "/proc/self/fd/" + std::to_string(fd.get());
        (void)::inotify_add_watch(inotify, magic.c_str(), mask | IN_MASK_ADD);
    }
}

// The jail directory is still the one `jail` names, root's and closed to
// others, as the kernel's caches have it (an expired cache: false).
bool jail_unchanged(const Config &config, const FileId &jail) {
    const Fd fd = open_below(AT_FDCWD, config.jail.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW,
                             Resolve::NoSymlinksCached);
    struct statx stx {};
    return fd.valid() &&
           ::statx(fd.get(), "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
                   STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO, &stx) == 0 &&
           makedev(stx.stx_dev_major, stx.stx_dev_minor) == jail.dev && stx.stx_ino == jail.ino &&
           stx.stx_uid == 0 && (stx.stx_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// The state directory is still root's and closed to others (its parents'
// modes are watched).
bool state_dir_closed(const Config &config) {
    struct statx stx {};
    return ::statx(AT_FDCWD, config.state_dir.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
                   STATX_TYPE | STATX_MODE | STATX_UID, &stx) == 0 &&
           S_ISDIR(stx.stx_mode) && stx.stx_uid == 0 && (stx.stx_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// The token, when it is current for `view` and nothing is queued.
std::optional<ArmedToken> current_token(const Config &config, const StepView &view,
                                        Queues &queues) {
    auto token = read_token(config);
    if (!token || !token_current(*token, view, config.recheck_s) ||
        !open_queues(token->watch, queues) || anything_queued(queues)) {
        return std::nullopt;
    }
    return token;
}

// The mount ID (unique) of the mount on top at `path`, when one is there.
std::optional<std::uint64_t> mount_on(const std::string &path) {
    struct statx stx {};
    if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
                STATX_MNT_ID_UNIQUE, &stx) != 0 ||
        (stx.stx_mask & STATX_MNT_ID_UNIQUE) == 0 ||
        (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) == 0) {
        return std::nullopt;
    }
    return stx.stx_mnt_id;
}

// One mount event as the fanotify queue reports it (FAN_REPORT_MNT).
struct MountEvent {
    std::uint64_t mask = 0;
    std::optional<std::uint64_t> mount;
};

// struct fanotify_event_info_mnt (Linux 6.15), which older headers lack.
struct MountInfo {
    fanotify_event_info_header hdr;
    std::uint64_t mnt_id;
};

// Reads every mount event queued (the queue is non-blocking).
std::vector<MountEvent> read_mount_events(int fanotify) {
    std::vector<MountEvent> events;
    std::array<char, 4096> buf{};
    while (queued(fanotify)) {
        const ssize_t n = ::read(fanotify, buf.data(), buf.size());
        if (n <= 0) {
            break;
        }
        const auto size = static_cast<std::size_t>(n);
        for (std::size_t at = 0; at + sizeof(fanotify_event_metadata) <= size;) {
            fanotify_event_metadata meta{};
            std::memcpy(&meta, buf.data() + at, sizeof(meta));
            if (meta.event_len < sizeof(meta) || at + meta.event_len > size) {
                break;
            }
            MountEvent event{meta.mask, std::nullopt};
            for (std::size_t info = at + meta.metadata_len;
                 info + sizeof(fanotify_event_info_header) <= at + meta.event_len;) {
                fanotify_event_info_header header{};
                std::memcpy(&header, buf.data() + info, sizeof(header));
                if (header.len < sizeof(header)) {
                    break;
                }
                if (header.info_type == FAN_EVENT_INFO_TYPE_MNT &&
                    header.len >= sizeof(MountInfo)) {
                    MountInfo record{};
                    std::memcpy(&record, buf.data() + info, sizeof(record));
                    event.mount = record.mnt_id;
                }
                info += header.len;
            }
            events.push_back(event);
            at += meta.event_len;
        }
    }
    return events;
}

bool one_of(const std::vector<std::uint64_t> &ids, const std::optional<std::uint64_t> &id) {
    return id && std::find(ids.begin(), ids.end(), *id) != ids.end();
}

} // namespace

void OwnMounts::made(const std::string &path) {
    if (auto id = mount_on(path)) {
        attached_.push_back(*id);
    }
}

void OwnMounts::dropping(const std::string &path) {
    if (auto id = mount_on(path)) {
        detached_.push_back(*id);
    }
}

void OwnMounts::let_through(const Config &config) {
    if (attached_.empty() && detached_.empty()) {
        return;
    }
    Fd lock;
    Queues queues;
    const auto token = read_token(config);
    if (!token || !lock_state(config.state_dir, lock, LOCK_EX).ok() ||
        !open_queues(token->watch, queues)) {
        return; // nothing armed: the next step arms, emptying the queues
    }
    for (const MountEvent &event : read_mount_events(queues.fanotify.get())) {
        const bool ours = (event.mask == FAN_MNT_ATTACH && one_of(attached_, event.mount)) ||
                          (event.mask == FAN_MNT_DETACH && one_of(detached_, event.mount));
        if (!ours) {
            disarm_watch(config); // taken off the queue: the token must go instead
            break;
        }
    }
    attached_.clear();
    detached_.clear();
}

Status NodeWatch::start(const Config &config) {
    stop(config);
    Fd fanotify(::fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_MNT | FAN_CLOEXEC | FAN_NONBLOCK,
                                O_RDONLY | O_CLOEXEC));
    if (!fanotify.valid()) {
        return Status::from_errno("fanotify_init with mount events (Linux 6.15 or later)");
    }
    const Fd own_ns(::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC));
    if (!own_ns.valid() ||
        ::fanotify_mark(fanotify.get(), FAN_MARK_ADD | FAN_MARK_MNTNS,
                        FAN_MNT_ATTACH | FAN_MNT_DETACH, own_ns.get(), nullptr) != 0) {
        return Status::from_errno("watching the mounts of slurmd's mount namespace");
    }
    Fd inotify(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    if (!inotify.valid()) {
        return Status::from_errno("inotify_init1");
    }
    WatchRecord record{::getpid(), inotify.get(), fanotify.get(), 0};
    if (!mount_namespace_of("/proc/self/ns/mnt", record.mount_ns)) {
        return Status::from_errno("stat /proc/self/ns/mnt");
    }
    if (auto s = prepare_state_dir(config.state_dir); !s.ok()) {
        return s;
    }
    Fd lock;
    if (auto s = lock_state(config.state_dir, lock, LOCK_EX); !s.ok()) {
        return s;
    }
    (void)::unlink(armed_path(config).c_str());
    if (auto s = write_file_atomically(watch_path(config), format_watch_record(record)); !s.ok()) {
        return s;
    }
    inotify_ = std::move(inotify);
    fanotify_ = std::move(fanotify);
    return {};
}

void NodeWatch::stop(const Config &config) {
    if (!running()) {
        return;
    }
    Fd lock;
    if (lock_state(config.state_dir, lock, LOCK_EX).ok()) {
        (void)::unlink(armed_path(config).c_str());
        (void)::unlink(watch_path(config).c_str());
    }
    inotify_.reset();
    fanotify_.reset();
}

// Without STATE/lock: a rebuild drops the token before it touches the kept
// namespace, so a step that read a current token joins that namespace or a
// newer one (an STATE/ns being replaced is not a namespace: the full check).
bool join_watched(const Config &config, NodeNamespace &out) {
    StepView view;
    Queues queues;
    if (config.recheck_s == 0 || !view_of_this_step(config, view) || !state_dir_closed(config)) {
        return false;
    }
    auto token = current_token(config, view, queues);
    if (!token || !jail_unchanged(config, token->jail)) {
        return false;
    }
    open_kept_namespace(config.state_dir, out.fd);
    if (!out.fd.valid()) {
        return false;
    }
    out.jail = token->jail;
    out.stamp = std::move(token->stamp);
    out.watched = true;
    return true;
}

void arm_watch(const Config &config, const CurrentStamp &now) {
    StepView view;
    auto record = parse_watch_record(read_small_file(watch_path(config)));
    std::uint64_t mount_ns = 0;
    if (config.recheck_s == 0 || !record || !view_of_this_step(config, view) ||
        !mount_namespace_of("/proc/thread-self/ns/mnt", mount_ns) || mount_ns != record->mount_ns) {
        return;
    }
    Fd lock;
    Queues queues;
    if (!lock_state(config.state_dir, lock, LOCK_EX).ok() ||
        current_token(config, view, queues).has_value()) {
        return; // armed already
    }
    const auto holder = find_holder(*record);
    if (!holder) {
        return; // slurmd is gone
    }
    if (*holder != record->pid) {
        record->pid = *holder;
        (void)write_file_atomically(watch_path(config), format_watch_record(*record));
    }
    if (!open_queues(*record, queues)) {
        return; // slurmd's queues are out of reach (pidfd_getfd refused)
    }
    (void)::unlink(armed_path(config).c_str());
    drain(queues.inotify.get());
    drain(queues.fanotify.get());
    add_watches(queues.inotify.get(), watches_for(checked_paths(config, now), config.state_dir,
                                                  {config.jail, config.state_dir}));
    // Checked again now that every change is queued: what changed between
    // the step's first check and the watches is seen here.
    CurrentStamp again;
    if (!current_stamp(config, again).ok()) {
        return;
    }
    const std::string kept = read_small_file(config.state_dir + "/stamp", kStampLimit);
    const std::int64_t until =
        armed_until(read_probe_memo(config.state_dir), boot_seconds(), config.recheck_s);
    if (again.stamp != kept || until == 0 || anything_queued(queues)) {
        return;
    }
    const ArmedToken token{*record,       until,      view.root_mount,   view.plugin,
                           view.settings, again.jail, stamp_digest(kept)};
    (void)write_file_atomically(armed_path(config), format_armed_token(token));
}

void disarm_watch(const Config &config) {
    (void)::unlink(armed_path(config).c_str());
}

} // namespace sjail
