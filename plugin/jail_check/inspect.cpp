// SPDX-License-Identifier: Apache-2.0
#include "inspect.hpp"

#include "container_needs.hpp"
#include "jail_arch.hpp"
#include "mps_needs.hpp"
#include "pyxis_needs.hpp"
#include "requirements.hpp"
#include "sjail/core/arch.hpp"
#include "sjail/core/node/jail_policy.hpp"
#include "sjail/core/whole_number.hpp"
#include "sjail/sys/gpu/gpu_view.hpp"
#include "sjail/sys/gpu/ld_cache.hpp"
#include "sjail/sys/gpu/mps_shm.hpp"
#include "sjail/sys/node/jail_probe.hpp"
#include "sjail/sys/node/jail_view.hpp"
#include "sjail/sys/node/node_role.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"
#include "sjail/sys/trusted_path.hpp"
#include "su_stack.hpp"

#include <algorithm>
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

struct Run {
    const Subject &subject;
    const Config &config;
    std::vector<Finding> findings;
    Fd jail;                      // O_PATH of the jail root; empty when it cannot be opened at all
    bool node_gpu_driver = false; // the plugin binds this node's NVIDIA driver into jobs

    void problem(std::string cause, std::string fix) {
        findings.push_back({Severity::Problem, std::move(cause), std::move(fix)});
    }
    void warning(std::string cause, std::string fix) {
        findings.push_back({Severity::Warning, std::move(cause), std::move(fix)});
    }
};

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

// A file that srun and sbatch inside jobs read: bound by conf_dir=, or present in the jail.
Status open_in_jail(Run &run, const std::string &path, TrustedOpen &out, bool for_reading = false) {
    return open_trusted(run.jail.get(), "jail " + run.config.jail, path, TrustedKind::File, out,
                        for_reading);
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

void check_plugin_in_jail(Run &run) {
    const auto paths = plugin_paths(run.subject.line.plugin, run.subject.slurm.plugin_dirs);
    std::string last;
    for (const auto &path : paths) {
        TrustedOpen found;
        auto s = open_in_jail(run, path, found);
        if (s.ok()) {
            return;
        }
        last = s.message();
    }
    run.problem("chroot.so is not in the jail (" + last +
                    "): srun and sbatch inside jobs load plugstack.conf and fail without it",
                "copy the plugin into the jail: install -m 0755 " +
                    (paths.empty() ? std::string("chroot.so") : paths.front()) + " " +
                    run.config.jail + (paths.empty() ? std::string("/") : paths.front()));
}

void check_file_for_jobs(Run &run, const std::string &path, const std::string &what) {
    if (bound_by_conf_dir(run.config, path)) {
        return;
    }
    TrustedOpen found;
    if (auto s = open_in_jail(run, path, found); !s.ok()) {
        run.problem(what + " " + path + " is outside conf_dir=" + run.config.conf_dir +
                        " and not in the jail (" + s.message() + ")",
                    "move it into " + run.config.conf_dir + ", or put a root-owned copy at " +
                        run.config.jail + path);
    }
}

void check_jail_users(Run &run) {
    TrustedOpen passwd;
    std::string text;
    if (!open_in_jail(run, "/etc/passwd", passwd, true).ok() ||
        !read_whole_file(passwd.fd.get(), passwd.shown, text).ok()) {
        return; // a missing or refused passwd is a system-path finding already
    }
    const auto names = passwd_names(text);
    const std::string &user = run.subject.slurm.slurm_user;
    if (std::find(names.begin(), names.end(), user) == names.end()) {
        run.warning("slurm.conf's SlurmUser " + user + " is not in the jail's /etc/passwd",
                    "add the same passwd entry (and the job users') to " + run.config.jail +
                        "/etc/passwd, e.g. with images/jail/add-jail-users");
    }
    TrustedOpen srun;
    if (!open_in_jail(run, "/usr/bin/srun", srun).ok()) {
        run.warning("the jail has no /usr/bin/srun: batch scripts cannot start job steps",
                    "install slurm-client in the jail (the same Slurm version as the nodes)");
    }
}

// The text of a root-owned file of the jail; "" when it is missing or refused.
std::string jail_text(Run &run, const std::string &path) {
    TrustedOpen file;
    std::string text;
    if (!open_in_jail(run, path, file, true).ok() ||
        !read_whole_file(file.fd.get(), file.shown, text).ok()) {
        return {};
    }
    return text;
}

// A number the kernel shows in a file of /proc/sys; nothing when the file
// does not exist or holds something else.
std::optional<long long> kernel_setting(const char *path) {
    const Fd fd(::open(path, O_RDONLY | O_CLOEXEC));
    std::string text;
    if (!fd.valid() || !read_whole_file(fd.get(), path, text, 64).ok()) {
        return std::nullopt;
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
        text.pop_back();
    }
    return whole_number<long long>(text);
}

// The container runtimes in the jail, and what they need from the node
// (user namespaces, /dev/fuse) and from the jail (setuid id-map helpers,
// subordinate ids): see container_needs.hpp. Returns the runtimes found.
std::vector<std::string> check_containers(Run &run) {
    ContainerFacts facts;
    for (const char *path :
         {"/usr/bin/podman", "/usr/bin/ch-run", "/usr/bin/enroot", "/usr/local/bin/enroot"}) {
        TrustedOpen found;
        if (open_in_jail(run, path, found).ok()) {
            facts.runtimes.emplace_back(path);
        }
    }
    if (facts.runtimes.empty()) {
        return {};
    }
    facts.max_user_namespaces = kernel_setting("/proc/sys/user/max_user_namespaces");
    facts.apparmor_restricts_userns =
        kernel_setting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1;
    struct stat fuse {};
    if (::stat("/dev/fuse", &fuse) == 0 && S_ISCHR(fuse.st_mode)) {
        facts.fuse_mode = fuse.st_mode & 07777U;
    }
    for (const char *path : {"/usr/bin/newuidmap", "/usr/bin/newgidmap"}) {
        TrustedOpen helper;
        struct stat st {};
        if (open_in_jail(run, path, helper).ok() && ::fstat(helper.fd.get(), &st) == 0) {
            facts.id_map_helpers.push_back({path, st.st_uid == 0 && (st.st_mode & S_ISUID) != 0});
        }
    }
    if (!facts.id_map_helpers.empty()) {
        const std::string subuid = jail_text(run, "/etc/subuid");
        const std::string subgid = jail_text(run, "/etc/subgid");
        const std::string passwd = jail_text(run, "/etc/passwd");
        facts.users_without_subids = users_without_subids(passwd, {subuid, subgid});
        facts.subid_overlaps = subid_overlaps(passwd, subuid, "/etc/subuid");
        for (auto &overlap : subid_overlaps(jail_text(run, "/etc/group"), subgid, "/etc/subgid")) {
            facts.subid_overlaps.push_back(std::move(overlap));
        }
    }
    for (auto &finding : container_findings(run.config.jail, facts)) {
        run.findings.push_back(std::move(finding));
    }
    return facts.runtimes;
}

// True when `path` in the jail (resolved inside it, as enroot there sees
// it) is a regular file that someone may execute.
bool executable_in_jail(Run &run, std::string_view path) {
    const std::string relative(path.substr(1));
    const Fd fd = open_below(run.jail.get(), relative.c_str(), O_PATH | O_CLOEXEC, Resolve::InRoot);
    struct stat st {};
    return fd.valid() && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
           (st.st_mode & 0111U) != 0;
}

// The jail's enroot: its enroot.conf and GPU hooks (pyxis_needs.hpp).
void check_enroot(Run &run) {
    EnrootFacts facts;
    TrustedOpen conf;
    std::string text;
    if (open_in_jail(run, std::string(kEnrootConf), conf, true).ok() &&
        read_whole_file(conf.fd.get(), conf.shown, text).ok()) {
        facts.conf = std::move(text);
    }
    facts.stock_gpu_hook = executable_in_jail(run, kEnrootStockGpuHook);
    facts.jail_gpu_hook = executable_in_jail(run, kEnrootJailGpuHook);
    facts.node_gpu_driver = run.node_gpu_driver;
    for (auto &finding : enroot_findings(run.config.jail, facts)) {
        run.findings.push_back(std::move(finding));
    }
}

// The directories from "/" down to `path` on the node, as lstat shows them
// (runtime_dir_finding stops at the first missing one or symlink).
std::vector<NodeDirEntry> node_way(const std::string &path) {
    std::vector<NodeDirEntry> way;
    for (auto &component : path_and_parents(path)) {
        struct stat st {};
        const bool exists = ::lstat(component.c_str(), &st) == 0;
        way.push_back({std::move(component), exists, exists && S_ISLNK(st.st_mode),
                       exists && S_ISDIR(st.st_mode), st.st_uid, st.st_mode & 07777U});
    }
    return way;
}

// pyxis's plugstack.conf lines against chroot.so's, and the node directory
// chroot.so binds at each one's runtime_path (pyxis_needs.hpp).
void check_pyxis(Run &run) {
    for (auto &finding : pyxis_line_findings(run.subject.plugins, run.config)) {
        run.findings.push_back(std::move(finding));
    }
    for (const auto &pyxis : pyxis_lines(run.subject.plugins)) {
        const std::string runtime_path = pyxis_runtime_path(pyxis);
        const auto bind = bind_at(run.config, runtime_path);
        if (!bind) {
            continue; // a problem of pyxis_line_findings
        }
        if (auto finding = runtime_dir_finding(runtime_path, node_way(bind->source))) {
            run.findings.push_back(std::move(*finding));
        }
    }
}

void check_for_jobs(Run &run) {
    TrustedOpen node_plugin;
    for (const auto &path : plugin_paths(run.subject.line.plugin, run.subject.slurm.plugin_dirs)) {
        if (open_trusted_on_node(path, TrustedKind::File, node_plugin).ok()) {
            break;
        }
    }
    if (!node_plugin.fd.valid()) {
        run.problem("the plugin " + run.subject.line.plugin +
                        " is not installed in PluginDir on this node",
                    "install chroot.so (cmake --install, or the slurm-jail .deb)");
    }
    if (!run.jail.valid()) {
        return;
    }
    check_plugin_in_jail(run);
    for (const auto &file : run.subject.plugstack_files) {
        check_file_for_jobs(run, file,
                            file == run.subject.plugstack ? "plugstack.conf" : "included file");
    }
    if (run.subject.have_slurm_conf) {
        for (const auto &script : run.subject.slurm.task_scripts) {
            check_file_for_jobs(run, script, "TaskProlog/TaskEpilog");
        }
    }
    check_jail_users(run);
    const auto runtimes = check_containers(run);
    if (std::any_of(runtimes.begin(), runtimes.end(),
                    [](const std::string &path) { return path.ends_with("/enroot"); })) {
        check_enroot(run);
    }
}

// Slurm's own OCI support: oci.conf beside slurm.conf.
void check_slurm_oci(Run &run) {
    const std::string oci_conf = parent_dir(run.subject.slurm.conf_path) + "/oci.conf";
    struct stat st {};
    if (::lstat(oci_conf.c_str(), &st) == 0) {
        run.findings.push_back(slurm_oci_finding(oci_conf));
    }
}

// The text of /etc/pam.d/NAME (or of NAME, an absolute path), for reading a
// PAM stack as PAM does (through symlinks: the directory is root's).
std::optional<std::string> read_pam_file(const std::string &name) {
    const std::string path = name.starts_with("/") ? name : "/etc/pam.d/" + name;
    const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    std::string text;
    if (!fd.valid() || !read_whole_file(fd.get(), path, text, 1UL << 20).ok()) {
        return std::nullopt;
    }
    return text;
}

// On a compute node slurmd runs "su - USER" on the node's own root for jobs
// that ask for the user's login environment, and su runs the user's shell
// startup files: su's session must enter the jail, through both of its PAM
// services (su -l uses "su-l" where that file exists), before anything of
// the user's runs or anything can end the stack.
void check_su(Run &run) {
    if (!slurmd_runs_here()) {
        return;
    }
    for (const std::string service : {"su", "su-l"}) {
        const std::string stack = "/etc/pam.d/" + service;
        struct stat st {};
        if (service == "su-l" && ::lstat(stack.c_str(), &st) != 0) {
            continue;
        }
        const PamSessionStack session = read_session_stack(service, read_pam_file);
        for (const auto &what : session.unreadable) {
            run.problem(stack + ": " + what +
                            ", so this check cannot tell what su runs before it "
                            "enters the jail",
                        "make every file su's stack includes exist and readable by root");
        }
        const SuStackVerdict verdict = judge_su_stack(session);
        if (!verdict.enters_jail) {
            run.problem(stack +
                            " does not enter the jail (no 'session required pam_slurm_jail.so' "
                            "line) and slurmd runs on this node: its su for sbatch --get-user-env "
                            "and --export=NONE runs the user's ~/.bash_profile on the node's own "
                            "root",
                        "end the session stack of " + stack +
                            " with 'session required pam_slurm_jail.so node=compute "
                            "no_job=private' (see pam_slurm_jail(8), SU ON COMPUTE NODES)");
        }
        for (const auto &cause : verdict.before_jail) {
            run.problem(stack + ": " + cause,
                        "put 'session required pam_slurm_jail.so node=compute no_job=private' "
                        "before that line in su's session stack, or remove the line (see "
                        "pam_slurm_jail(8), SU ON COMPUTE NODES)");
        }
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
    check_pyxis(run);
    check_su(run);
    return run.findings;
}

} // namespace sjail::check
