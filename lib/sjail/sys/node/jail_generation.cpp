// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/node/jail_generation.hpp"

#include "sjail/core/node/jail_generation.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/sys/node/jail_probe.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"
#include "sjail/sys/state_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace sjail {
namespace {

constexpr std::string_view kPresent = "live ";
constexpr std::string_view kAbsent = "none";
constexpr std::string_view kAnswer = "sjail-live ok\n";
// The child's report of a failed call (the filesystem's error), as against
// "error: " for a live file the plugin refuses.
constexpr std::string_view kIoError = "io-error: ";
// The volume itself could not be opened: the step's own checks of jail=
// name the cause, and nothing is recorded.
constexpr std::string_view kNoVolume = "no-volume";
// The name led to a file that was replaced meanwhile (a network client
// holds the old name until its entry timeout: GlusterFS, 1 s): read again.
constexpr std::string_view kReplaced = "replaced\n";
constexpr int kReplacedRetries = 15;
constexpr useconds_t kReplacedPause = 200000;

// A failed open below the volume: a link or a file where a directory must
// be is refused as such; anything else is the filesystem's error.
std::string open_failure(const std::string &path) {
    const int err = errno;
    if (err == ELOOP || err == ENOTDIR) {
        return "error: " + path + (err == ELOOP ? " is a symlink" : ": not a directory on the way");
    }
    return std::string(kIoError) + Status::from_errno(path, err).message();
}

// What identifies `fd`'s file: KIND, then its device, inode, size, change
// and modification times. A rename over it, or a new entry in a directory,
// changes it. `sync`: ask the filesystem (the child); else its cache alone.
std::string key_of(std::string_view kind, int fd, bool sync) {
    struct statx stx {};
    const int flags = AT_EMPTY_PATH | (sync ? AT_STATX_FORCE_SYNC : AT_STATX_DONT_SYNC);
    if (::statx(fd, "", flags, STATX_BASIC_STATS, &stx) != 0) {
        return {};
    }
    return std::string(kind) + std::to_string(makedev(stx.stx_dev_major, stx.stx_dev_minor)) + ":" +
           std::to_string(stx.stx_ino) + " " + std::to_string(stx.stx_size) + " " +
           std::to_string(stx.stx_ctime.tv_sec) + "." + std::to_string(stx.stx_ctime.tv_nsec) +
           " " + std::to_string(stx.stx_mtime.tv_sec) + "." + std::to_string(stx.stx_mtime.tv_nsec);
}

// The live file's key from the kernel's caches alone: "live ..." for the
// file; "none" when the caches say it is missing or cannot tell (an entry a
// network filesystem must look up again).
std::string cached_key(const std::string &volume) {
    const Fd vol = open_below(AT_FDCWD, volume.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW,
                              Resolve::NoSymlinksCached);
    const Fd live = vol.valid() ? open_below(vol.get(), std::string(kLiveFile).c_str(),
                                             O_PATH | O_NOFOLLOW, Resolve::BeneathCached)
                                : Fd();
    return live.valid() ? key_of(kPresent, live.get(), false) : std::string(kAbsent);
}

// In the child: the live file read from the filesystem itself. "KEY\nTEXT"
// after kAnswer, or "error: ...".
std::string read_fresh(const std::string &volume) {
    const std::string file = volume + "/" + std::string(kLiveFile);
    const Fd vol = open_below(AT_FDCWD, volume.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW,
                              Resolve::NoSymlinks);
    if (!vol.valid()) {
        return std::string(kAnswer) + std::string(kNoVolume) + "\n"; // the step's checks say why
    }
    const Fd state = open_below(vol.get(), std::string(kJailStateDir).c_str(), O_PATH | O_NOFOLLOW,
                                Resolve::Beneath);
    if (!state.valid()) {
        return errno == ENOENT ? std::string(kAnswer) + std::string(kAbsent) + "\n"
                               : open_failure(volume + "/.slurm-jail");
    }
    struct stat st {};
    if (::fstat(state.get(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return "error: " + volume + "/.slurm-jail is not a directory";
    }
    if (auto s = check_root_owned(volume + "/.slurm-jail", st.st_uid, st.st_mode); !s.ok()) {
        return "error: " + s.message();
    }
    // By name first, from the server: a name the node's client still holds
    // for a file replaced on another node fails with ESTALE, and the kernel
    // then looks the name up afresh (LOOKUP_REVAL).
    struct statx named {};
    if (::statx(state.get(), "live", AT_SYMLINK_NOFOLLOW | AT_STATX_FORCE_SYNC, STATX_BASIC_STATS,
                &named) != 0) {
        return errno == ENOENT ? std::string(kAnswer) + std::string(kAbsent) + "\n"
                               : open_failure(file);
    }
    const Fd live =
        open_below(state.get(), "live", O_RDONLY | O_NOFOLLOW | O_NONBLOCK, Resolve::Beneath);
    if (!live.valid()) {
        return errno == ENOENT || errno == ESTALE ? std::string(kReplaced) : open_failure(file);
    }
    if (::fstat(live.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return "error: " + file + " is not a regular file";
    }
    if (auto s = check_root_owned(file, st.st_uid, st.st_mode); !s.ok()) {
        return "error: " + s.message();
    }
    std::string text;
    if (auto s = read_whole_file(live.get(), file, text, kLiveFileMax); !s.ok()) {
        return errno == ESTALE ? std::string(kReplaced) : "error: " + s.message();
    }
    // Still the file the name led to, and still there: else it was
    // replaced meanwhile, and the next step reads it again.
    const std::string key = key_of(kPresent, live.get(), true);
    if (key.empty() || ::fstat(live.get(), &st) != 0 || st.st_nlink == 0 ||
        st.st_ino != named.stx_ino) {
        return std::string(kReplaced);
    }
    return std::string(kAnswer) + key + "\n" + text;
}

// In the child: read again while the file the name led to was replaced.
std::string read_settled(const std::string &volume) {
    std::string report = read_fresh(volume);
    for (int i = 0; i < kReplacedRetries && report == kReplaced; ++i) {
        ::usleep(kReplacedPause);
        report = read_fresh(volume);
    }
    return report;
}

// The live file's key and text as the child read them ("KEY\nTEXT").
Status read_in_child(const Config &config, std::string &memo) {
    std::string report;
    bool in_time = false;
    if (auto s = ask_in_child(
            config, "the jail's live generation reader", [&] { return read_settled(config.jail); },
            report, in_time);
        !s.ok()) {
        return s;
    }
    if (!in_time) {
        return filesystem_silent(config);
    }
    if (report == kReplaced) {
        return filesystem_cannot_serve(config, config.jail + "/" + std::string(kLiveFile) +
                                                   " was replaced each time it was read");
    }
    if (report.starts_with(kIoError)) {
        return filesystem_cannot_serve(config, report.substr(kIoError.size()));
    }
    if (!report.starts_with(kAnswer)) {
        const std::string why = report.starts_with("error: ") ? report.substr(7) : report;
        return Status::failure(
            "jail " + config.jail + ": " +
            (why.empty() ? "reading its live generation ended without an answer" : why));
    }
    memo = report.substr(kAnswer.size());
    return {};
}

// Whether a step may take the recorded live file: the same volume's, read
// within recheck= seconds, and the caches show no other file there now. A rename on this
// node is in its caches at once; one on another node reaches them when an
// entry expires, and the record itself expires within recheck=.
bool memo_current(const LiveMemo &memo, const Config &config, std::int64_t now_s) {
    if (memo.volume != config.jail || memo.at_s < 0 || now_s < memo.at_s ||
        now_s - memo.at_s >= config.recheck_s) {
        return false;
    }
    const std::string cached = cached_key(config.jail);
    return !cached.starts_with(kPresent) || cached == memo.key;
}

// The live file as recorded in STATE/jail-live when that is current, else
// as read again now (and recorded).
Status live_memo(const Config &config, LiveRead how, LiveMemo &memo) {
    const std::string path = live_memo_path(config.state_dir);
    const std::int64_t now = boot_seconds();
    if (how == LiveRead::Recorded) {
        memo = parse_live_memo(read_small_file(path, kLiveFileMax + 256));
        if (memo_current(memo, config, now)) {
            return {};
        }
    }
    std::string read;
    if (auto s = read_in_child(config, read); !s.ok()) {
        return s;
    }
    const std::string text = "at=" + std::to_string(now) + " " + config.jail + "\n" + read;
    memo = parse_live_memo(text);
    if (how == LiveRead::Recorded && memo.key != kNoVolume &&
        prepare_state_dir(config.state_dir).ok()) {
        (void)write_file_atomically(path, text);
    }
    return {};
}

} // namespace

std::string live_memo_path(const std::string &state_dir) {
    return state_dir + "/jail-live";
}

Status resolve_live_jail(const Config &config, Config &out, LiveRead how) {
    out = config;
    if (!config.jail_volume.empty()) {
        return {}; // resolved already
    }
    LiveMemo memo;
    if (auto s = live_memo(config, how, memo); !s.ok()) {
        return s;
    }
    out.jail_volume = config.jail;
    if (memo.key == kAbsent || memo.key == kNoVolume) {
        return {}; // a single-directory jail (or none: the jail's own checks say so)
    }
    if (!memo.key.starts_with(kPresent)) {
        return Status::failure("jail " + config.jail + ": its live generation could not be " +
                               "identified; the next step reads " + std::string(kLiveFile) +
                               " again");
    }
    const std::string file = config.jail + "/" + std::string(kLiveFile);
    LiveGeneration live;
    if (auto s = parse_live_generation(file, memo.text, live); !s.ok()) {
        return Status::failure(s.message() + "; make a generation live again with populate-jail " +
                               "--rollback --target " + config.jail + ", or populate it anew");
    }
    out.jail =
        config.jail + "/" + std::string(kJailStateDir) + "/" + generation_dir(live.generation);
    out.jail_generation = live.generation;
    for (const auto &path : live.data) {
        out.binds.push_back({config.jail + path, path, false});
    }
    return {};
}

} // namespace sjail
