// SPDX-License-Identifier: Apache-2.0
// slurm-jail-check's look at what jobs need: chroot.so and the files srun
// and sbatch read inside the jail, the jail's users, its container runtimes
// and enroot, pyxis's lines, and su's PAM stack on a compute node.
#include "container_needs.hpp"
#include "inspect_run.hpp"
#include "pam_stack.hpp"
#include "pyxis_needs.hpp"
#include "requirements.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/core/whole_number.hpp"
#include "sjail/sys/node/node_role.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"
#include "su_stack.hpp"

#include <algorithm>
#include <fcntl.h>
#include <optional>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace sjail::check {
namespace {

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

// chroot.so on the node and in the jail, and what srun, sbatch and the
// container runtimes inside jobs need from the jail.
void check_in_jail_for_jobs(Run &run) {
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

// Slurm's own OCI support: oci.conf beside slurm.conf.
void check_slurm_oci(Run &run) {
    const std::string oci_conf = parent_dir(run.subject.slurm.conf_path) + "/oci.conf";
    struct stat st {};
    if (::lstat(oci_conf.c_str(), &st) == 0) {
        run.findings.push_back(slurm_oci_finding(oci_conf));
    }
}

void check_for_jobs(Run &run) {
    check_in_jail_for_jobs(run);
    check_pyxis(run);
    check_su(run);
}

} // namespace sjail::check
