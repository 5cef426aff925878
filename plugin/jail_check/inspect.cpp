// SPDX-License-Identifier: Apache-2.0
// slurm-jail-check's look at the node and the jail: the jail's filesystem,
// root and system paths, its architecture, the mount points with their node
// sources, the node's GPU driver and MPS daemon, the state and tmp
// directories; then what jobs need (inspect_jobs.cpp).
#include "inspect.hpp"

#include "inspect_run.hpp"
#include "jail_arch.hpp"
#include "mps_needs.hpp"
#include "requirements.hpp"
#include "sjail/core/arch.hpp"
#include "sjail/core/node/jail_policy.hpp"
#include "sjail/sys/gpu/gpu_view.hpp"
#include "sjail/sys/gpu/ld_cache.hpp"
#include "sjail/sys/gpu/mps_shm.hpp"
#include "sjail/sys/node/jail_probe.hpp"
#include "sjail/sys/node/jail_view.hpp"
#include "sjail/sys/safe_open.hpp"

#include <array>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <optional>

namespace sjail::check {
namespace {

bool has(const std::string &text, const char *part) {
    return text.find(part) != std::string::npos;
}

// The jail with the plugin's rule; when that refuses it for ownership, the
// checks inside still run on a symlink-free open (reading only).
void open_jail(Run &run) {
    const std::string &jail = run.config.jail;
    if (auto s = open_root_owned_dir(jail, run.jail); s.ok()) {
        return;
    } else if (has(s.message(), "No such file") || has(s.message(), "not a directory")) {
        run.problem("jail " + jail + ": " + s.message(),
                    "point jail= at the jail's root directory, or create the jail there");
    } else {
        run.problem("jail " + jail + ": " + s.message(),
                    "make " + jail +
                        " and every directory above it a real directory (no symlink), owned by "
                        "root and not writable by group or others (chown root:root; chmod go-w)");
    }
    run.jail = open_below(AT_FDCWD, jail.c_str(), O_PATH | O_DIRECTORY, Resolve::NoSymlinks);
    if (!run.jail.valid()) {
        run.warning("the checks inside the jail " + jail + " did not run: it cannot be opened",
                    "fix the jail path above, then run slurm-jail-check again");
    }
}

// The jail's filesystem answers the plugin's probe in time (without
// recording the answer); false when it does not, and the checks inside the
// jail, which would wait on its server, are left out. A jail below the root
// of a network mount costs steps a probe whenever the client's cache expired.
bool check_jail_filesystem(Run &run) {
    const std::string &jail = run.config.jail;
    JailMount mount;
    if (!jail_mount_kind(jail, mount).ok()) {
        return true; // a missing jail: open_jail says so
    }
    if (mount.network && !mount.mount_root) {
        run.warning("jail " + jail + " is a directory inside a network filesystem (" +
                        name_jail_filesystem(jail) +
                        "): a step whose way to it the node's kernel no longer holds asks the "
                        "server with a probe, about one per step once the client's cache expires",
                    "mount the jail's directory at " + jail + " itself (mount --bind DIR " + jail +
                        " when the node boots)");
    }
    if (!mount.network) {
        return true;
    }
    JailFilesystem filesystem(run.config);
    if (auto s = filesystem.probe(false); !s.ok()) {
        run.problem(s.message(), "bring the jail's server back (or fix the mount), then run "
                                 "slurm-jail-check again; the checks inside the jail were skipped");
        return false;
    }
    return true;
}

void check_system_paths(Run &run) {
    for (const auto &path : jail_system_paths()) {
        if (auto s = check_jail_system_path(run.jail.get(), run.config.jail, path); !s.ok()) {
            const std::string shown = run.config.jail + (path == "/" ? "" : path);
            run.problem(s.message(), "chown root:root " + shown + "; chmod go-w " + shown);
        }
    }
}

// The type a mount point must have: the plugin's rule (that of its source).
// Empty when the source is missing or refused (reported on its own), or not
// named (then a mount point of either type will do).
std::optional<TargetType> source_type(Run &run, const MountPoint &point) {
    if (point.type != PointType::LikeSource) {
        return point.type == PointType::File ? TargetType::File : TargetType::Directory;
    }
    if (point.setting == "tmp=") {
        // Created 1777 by the plugin when missing.
        if (auto s = check_root_dir(point.source, 01777); !s.ok()) {
            run.problem("tmp=" + point.source + ": " + s.message(),
                        "make the directories above " + point.source +
                            " root-owned and closed to group and others, or set tmp=");
        }
        return TargetType::Directory;
    }
    if (point.source.empty()) {
        return std::nullopt; // the driver's sockets and data files: checked by find_node_gpu
    }
    Fd source;
    if (auto s = open_bind_source(point.source, source); !s.ok()) {
        run.problem(s.message() + " (" + point.setting + ")", node_path_fix(point, s.message()));
        return std::nullopt;
    }
    struct stat st {};
    if (::fstat(source.get(), &st) != 0) {
        return std::nullopt;
    }
    return S_ISDIR(st.st_mode) ? TargetType::Directory : TargetType::File;
}

void check_mount_point(Run &run, const MountPoint &point, std::optional<TargetType> type) {
    const std::string &jail = run.config.jail;
    MountPoint shown = point;
    Fd target;
    Status s = open_mount_target(run.jail.get(), point.target, type.value_or(TargetType::Directory),
                                 target);
    if (!type && !s.ok() && has(s.message(), "but its source is")) {
        shown.type = PointType::File; // the source's type is unknown: either will do
        s = open_mount_target(run.jail.get(), point.target, TargetType::File, target);
    } else if (type == TargetType::File) {
        shown.type = PointType::File;
    }
    if (!s.ok()) {
        const std::string cause = s.message() + " (jail " + jail + ", " + point.setting + ")";
        if (point.required) {
            run.problem(cause, mount_point_fix(jail, shown, s.message()));
        } else {
            run.warning(cause + "; the plugin skips this bind",
                        mount_point_fix(jail, shown, s.message()));
        }
        return;
    }
    struct stat st {};
    if (::fstat(target.get(), &st) == 0 && st.st_uid != 0) {
        const std::string path = jail + point.target;
        run.problem("mount point " + point.target + " inside the jail is owned by uid " +
                        std::to_string(st.st_uid) + ", not root",
                    "chown root:root " + path);
    }
}

void check_munge_socket(Run &run) {
    TrustedOpen socket;
    const std::string path = run.config.munge_dir + "/munge.socket.2";
    if (auto s = open_trusted_on_node(path, TrustedKind::File, socket); !s.ok() && socket.missing) {
        Fd dir;
        if (open_bind_source(run.config.munge_dir, dir).ok()) {
            run.warning(path + " is missing: munged is not running on this node, so srun and "
                               "sbatch inside jobs cannot authenticate",
                        "start munged (runuser -u munge -- munged)");
        }
    }
}

void check_gpu(Run &run, std::vector<MountPoint> &points) {
    NodeGpu gpu;
    if (auto s = find_node_gpu(run.config, gpu); !s.ok()) {
        run.problem("gpu=" + std::string(gpu_mode_name(run.config.gpu)) + ": " + s.message(),
                    has(s.message(), "; this node is ")
                        ? "install the NVIDIA driver built for " + std::string(kBuildArch.name) +
                              " there, or set gpu=off"
                        : "make the driver's files root-owned and closed to group and others, "
                          "point gpu_driver_root= at it, or set gpu=off");
        return;
    }
    if (!gpu.driver.found()) {
        return;
    }
    run.node_gpu_driver = true;
    DriverPlan plan;
    if (auto s = plan_driver_view(gpu.driver.files, DriverView{}, plan); !s.ok()) {
        run.problem("the node's NVIDIA driver: " + s.message(), "set gpu=off until it is fixed");
        return;
    }
    for (auto &point : gpu_mount_points(plan, run.config)) {
        points.push_back(std::move(point));
    }
    // The plugin builds the jobs' loader cache with the node's ldconfig.
    const std::string ldconfig = LoaderCacheRequest{}.ldconfig;
    TrustedOpen program;
    if (auto s = open_ldconfig_program(ldconfig, program); !s.ok()) {
        run.problem("gpu=" + std::string(gpu_mode_name(run.config.gpu)) +
                        ": every GPU node's step builds its loader cache with " + ldconfig +
                        ", and " + s.message(),
                    "reinstall the node's libc-bin (Debian, Ubuntu) or glibc (RHEL), or set "
                    "gpu=off");
    }
}

// A node-wide MPS daemon and the /dev/shm its clients in jobs need.
void check_mps(Run &run) {
    Fd shm;
    if (auto s = open_mps_shm(run.config, shm); !s.ok()) {
        run.problem(s.message() + ": every job on this node fails", kMpsShmFix);
        return;
    }
    MpsFacts facts{run.config.gpu_mps_dir, false, run.config.gpu_mps_shm, shm.valid()};
    const std::string control = run.config.gpu_mps_dir + "/control";
    struct stat st {};
    facts.daemon_runs = ::lstat(control.c_str(), &st) == 0;
    if (auto finding = mps_finding(facts)) {
        run.findings.push_back(std::move(*finding));
    }
    struct statfs fs {};
    struct sysinfo memory {};
    if (shm.valid() && ::fstatfs(shm.get(), &fs) == 0 && ::sysinfo(&memory) == 0) {
        const MpsShmSpace space{run.config.gpu_mps_shm, fs.f_type == TMPFS_MAGIC,
                                static_cast<unsigned long long>(fs.f_blocks) *
                                    static_cast<unsigned long long>(fs.f_bsize),
                                static_cast<unsigned long long>(memory.totalram) * memory.mem_unit};
        if (auto finding = mps_shm_space_finding(space)) {
            run.findings.push_back(std::move(*finding));
        }
    }
}

void check_mount_points(Run &run) {
    std::vector<MountPoint> points = plan_mount_points(run.config);
    if (run.config.gpu != GpuMode::Off) {
        check_gpu(run, points);
        check_mps(run);
    }
    for (const auto &point : points) {
        const auto type = source_type(run, point);
        if (run.jail.valid() && !point.made_by_plugin) {
            check_mount_point(run, point, type);
        }
    }
    check_munge_socket(run);
}

void check_state(Run &run) {
    const std::string &state = run.config.state_dir;
    if (auto s = check_root_dir(state, 0700); !s.ok()) {
        run.problem("state directory: " + s.message(),
                    "make " + state +
                        " and the directories above it root-owned and closed to group and "
                        "others, or set state= to such a node-local directory");
        return;
    }
    const std::string lock = state + "/lock";
    struct stat st {};
    if (::fstatat(AT_FDCWD, lock.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
        run.problem(lock + " is not a regular file: every step would fail to lock it",
                    "remove it (rm " + lock + "); the plugin makes a new one");
    }
    if (run.config.job_tmp == JobTmp::Directory) {
        if (auto s = check_root_dir(run.config.job_tmp_dir, 0700); !s.ok()) {
            run.problem("job_tmp=" + run.config.job_tmp_dir + ": " + s.message(),
                        "make it and the directories above it root-owned and closed to group "
                        "and others");
        }
    }
}

// The jail's architecture, from the ELF header of its /bin/sh, against the node's.
void check_jail_arch(Run &run) {
    TrustedOpen sh;
    if (!open_in_jail(run, "/bin/sh", sh, true).ok()) {
        return; // nothing to tell it by; a refused system path is reported on its own
    }
    std::array<char, 64> header{};
    const ssize_t n = ::pread(sh.fd.get(), header.data(), header.size(), 0);
    if (n <= 0) {
        return;
    }
    if (auto finding = jail_arch_finding(
            run.config.jail, std::string_view(header.data(), static_cast<std::size_t>(n)),
            kBuildArch)) {
        run.findings.push_back(std::move(*finding));
    }
}

} // namespace

std::vector<Finding> inspect(const Subject &subject) {
    Run run{subject, subject.config, {}, {}};
    const bool answers = check_jail_filesystem(run);
    if (answers) {
        open_jail(run);
    }
    if (run.jail.valid()) {
        check_system_paths(run);
        check_jail_arch(run);
    }
    if (answers) {
        check_mount_points(run);
    }
    check_state(run);
    if (subject.have_slurm_conf) {
        for (auto &finding : compare_with_slurm_conf(subject.config, subject.slurm)) {
            run.findings.push_back(std::move(finding));
        }
        check_slurm_oci(run);
    }
    check_for_jobs(run);
    return run.findings;
}

} // namespace sjail::check
