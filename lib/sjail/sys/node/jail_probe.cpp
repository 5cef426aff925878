// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/node/jail_probe.hpp"

#include "sjail/core/node/jail_probe.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/sys/child_process.hpp"
#include "sjail/sys/gpu/ld_cache.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <functional>
#include <optional>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace sjail {
namespace {

constexpr std::string_view kAnswer = "sjail-probe ok\n";

std::string memo_path(const std::string &state_dir) {
    return state_dir + "/jail-probe";
}

// A loader cache the jail's filesystem served but the plugin refuses: only
// a step that needs it (a GPU node) fails on it.
constexpr std::string_view kUnusable = "unusable: ";

// In the probe child: the jail root's attributes from the server itself (a
// live server answers; a dead one fails or never returns; the kernel keeps
// them for the steps' checks), then the loader cache's identity.
std::string probe_answer(const std::string &jail) {
    struct statx stx {};
    std::string line;
    // Only a stat: nothing is read or followed at the end of the path. The
    // fresh attributes stay in the node's cache for the steps' checks.
    if (::statx(AT_FDCWD, jail.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_FORCE_SYNC,
                STATX_BASIC_STATS, &stx) != 0) {
        return "error: " + Status::from_errno("stat " + jail).message();
    }
    if (auto l = jail_loader_stamp(jail, line); !l.ok()) {
        return std::string(kAnswer) + std::string(kUnusable) + l.message();
    }
    return std::string(kAnswer) + line;
}

// The mount holding `path`, or the nearest of its parents the node's kernel
// holds in its lookup cache: found without asking any filesystem's server
// (a component below a network mount's root may need one).
std::optional<std::uint64_t> cached_mount_id(std::string path) {
    if (!path.starts_with('/')) {
        return std::nullopt;
    }
    while (true) {
        const Fd fd =
            open_below(AT_FDCWD, path.c_str(), O_PATH | O_NOFOLLOW, Resolve::NoSymlinksCached);
        struct statx stx {};
        if (fd.valid() &&
            ::statx(fd.get(), "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
            (stx.stx_mask & STATX_MNT_ID) != 0) {
            return stx.stx_mnt_id;
        }
        if (path == "/") {
            return std::nullopt;
        }
        path = parent_dir(path);
    }
}

} // namespace

Status filesystem_silent(const Config &config) {
    return Status::failure("the jail's filesystem did not answer within build_timeout=" +
                           std::to_string(config.build_timeout_s) + " s (" +
                           name_jail_filesystem(config.jail) +
                           "); new steps on this node fail until its server answers again");
}

Status filesystem_cannot_serve(const Config &config, const std::string &why) {
    return Status::failure("the jail's filesystem (" + name_jail_filesystem(config.jail) +
                           ") cannot serve the jail: " + why);
}

std::int64_t boot_seconds() {
    timespec now{};
    (void)::clock_gettime(CLOCK_BOOTTIME, &now);
    return now.tv_sec;
}

std::optional<JailProbeMemo> read_probe_memo(const std::string &state_dir) {
    return parse_probe_memo(read_small_file(memo_path(state_dir)));
}

Status JailFilesystem::probe(bool keep_answer) {
    asked_ = true;
    silent_ = false;
    last_answer_ = ask_server(keep_answer);
    return last_answer_;
}

Status ask_in_child(const Config &config, const char *what,
                    const std::function<std::string()> &answer, std::string &report,
                    bool &in_time) {
    BuilderChild child;
    if (auto s = child.start(what, config.build_timeout_s, {},
                             [&](int report_fd, int hold_fd) {
                                 // A child stuck on a hung server is killed, but
                                 // lives on until the filesystem's client gives
                                 // up; it must not hold its parent's output open
                                 // (slurmd reads a HealthCheckProgram's until it
                                 // is closed).
                                 const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
                                 for (int fd = 0; fd <= 2 && null_fd >= 0; ++fd) {
                                     (void)::dup2(null_fd, fd);
                                 }
                                 write_all(report_fd, answer());
                                 (void)finish_report(report_fd, hold_fd);
                                 ::_exit(0);
                             });
        !s.ok()) {
        return s;
    }
    child.read_report();
    const BuilderEnd end = child.finish();
    report = child.report();
    in_time = end.kind != BuilderEnd::Kind::TimedOut && child.reported_in_time();
    return {};
}

Status JailFilesystem::ask_server(bool keep_answer) {
    std::string report;
    bool in_time = false;
    if (auto s = ask_in_child(
            config_, "the jail's filesystem probe", [&] { return probe_answer(config_.jail); },
            report, in_time);
        !s.ok()) {
        return s;
    }
    if (!in_time) {
        silent_ = true;
        (void)::unlink(memo_path(config_.state_dir).c_str());
        return filesystem_silent(config_);
    }
    if (!report.starts_with(kAnswer)) {
        (void)::unlink(memo_path(config_.state_dir).c_str());
        const std::string why = report.starts_with("error: ") ? report.substr(7) : report;
        return filesystem_cannot_serve(config_,
                                       why.empty() ? "the probe ended without an answer" : why);
    }
    probed_line_ = report.substr(kAnswer.size());
    if (keep_answer) {
        (void)write_file_atomically(memo_path(config_.state_dir),
                                    format_probe_memo({boot_seconds()}));
    }
    return {};
}

Status JailFilesystem::check_answers() {
    if (!probe_due(read_probe_memo(config_.state_dir), boot_seconds(), config_.recheck_s)) {
        return {};
    }
    return probe();
}

Status JailFilesystem::loader_line(int jail_root, std::string &out) {
    if (!answered() && cached_jail_loader_stamp(jail_root, out)) {
        return {};
    }
    if (!answered()) {
        if (auto s = probe(); !s.ok()) {
            return s;
        }
    }
    if (probed_line_.starts_with(kUnusable)) {
        return Status::failure(probed_line_.substr(kUnusable.size()));
    }
    out = probed_line_;
    return {};
}

Status jail_mount_kind(const std::string &jail, JailMount &out) {
    struct statfs fs {};
    struct statx stx {};
    if (::statfs(jail.c_str(), &fs) != 0) {
        return Status::from_errno("statfs " + jail);
    }
    if (::statx(AT_FDCWD, jail.c_str(), AT_STATX_DONT_SYNC | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS,
                &stx) != 0) {
        return Status::from_errno("stat " + jail);
    }
    constexpr std::array<unsigned long, 10> kNetwork = {
        0x65735546UL, // FUSE (GlusterFS, virtiofs, sshfs, ...)
        0x6969UL,     // NFS
        0x0bd00bd0UL, // Lustre
        0x00c36400UL, // CephFS
        0xfe534d42UL, // SMB2
        0xff534d42UL, // CIFS
        0x47504653UL, // GPFS
        0x01021997UL, // 9p
        0x013111a8UL, // IBRIX
        0xa501fcf5UL, // VxFS cluster
    };
    out.network = std::find(kNetwork.begin(), kNetwork.end(),
                            static_cast<unsigned long>(fs.f_type)) != kNetwork.end();
    out.mount_root = (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
                     (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
    return {};
}

std::string name_jail_filesystem(const std::string &jail) {
    if (auto mount_id = cached_mount_id(jail)) {
        if (auto name =
                describe_mount(read_small_file("/proc/self/mountinfo", 64UL << 20), *mount_id)) {
            return *name;
        }
    }
    return "the filesystem of " + jail;
}

} // namespace sjail
