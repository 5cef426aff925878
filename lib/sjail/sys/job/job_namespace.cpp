// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/job/job_namespace.hpp"

#include "sjail/core/builder_report.hpp"
#include "sjail/core/job/job_layout.hpp"
#include "sjail/core/node/generation_holds.hpp"
#include "sjail/sys/child_process.hpp"
#include "sjail/sys/gpu/mps_shm.hpp"
#include "sjail/sys/job/job_creator.hpp"
#include "sjail/sys/job/job_processes.hpp"
#include "sjail/sys/job/mps_shm_cleanup.hpp"
#include "sjail/sys/node/generation_holds.hpp"
#include "sjail/sys/node/node_watch.hpp"
#include "sjail/sys/node/proc_options.hpp"
#include "sjail/sys/ns_bind.hpp"
#include "sjail/sys/safe_open.hpp"
#include "sjail/sys/small_file.hpp"
#include "sjail/sys/state_dir.hpp"
#include "sjail/sys/tree_remove.hpp"

#include <algorithm>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sjail {
namespace {

// ---- opening what exists ----

// `made_from`, when given, receives what STATE/jobs/JOB/ready holds: the
// stamp of the node namespace the job's views were made from.
bool open_existing(const JobPaths &paths, JobNamespace &out, std::string *made_from = nullptr) {
    const Fd ready = open_regular(paths.ready, O_RDONLY);
    if (!ready.valid()) {
        return false;
    }
    if (made_from != nullptr &&
        !read_whole_file(ready.get(), paths.ready, *made_from, 1UL << 20).ok()) {
        return false;
    }
    const auto init = read_init(paths);
    if (!init || !is_running(*init)) {
        return false; // without its init the job's PID namespace takes no process
    }
    out.jail = parse_file_id(read_small_file(paths.jail, 64));
    open_namespace_file(paths.stepd_ns, out.stepd);
    open_namespace_file(paths.tasks_ns, out.tasks);
    open_namespace_file(paths.pid_ns, out.pid);
    open_namespace_file(paths.ipc_ns, out.ipc);
    return out.stepd.valid() && out.tasks.valid() && out.pid.valid();
}

// ---- keeping what the creator made (job_creator.hpp) ----

// Keeps the creator's stepd view and the new tasks' view (of the process
// holding it), in place of the job's current ones (which its running steps
// keep using); the PID namespace stays.
int replace_views(pid_t creator, pid_t maker, const JobPaths &paths, OwnMounts &own) {
    for (const auto *path : {&paths.stepd_ns, &paths.tasks_ns}) {
        own.dropping(*path);
        if (!reset_mount_point_file(*path).ok()) {
            return errno != 0 ? errno : EIO;
        }
    }
    if (const int err = bind_namespace_of(creator, "mnt", paths.stepd_ns); err != 0) {
        return err;
    }
    own.made(paths.stepd_ns);
    const int err = bind_namespace_of(maker, "mnt", paths.tasks_ns);
    own.made(paths.tasks_ns);
    return err;
}

// Keeps the creator's stepd view and the init's tasks view, PID and IPC
// namespaces.
int keep_namespaces(pid_t creator, pid_t init, const JobPaths &paths, OwnMounts &own) {
    struct Keep {
        pid_t pid;
        const char *kind;
        const std::string &path;
    };
    for (const Keep &keep :
         {Keep{creator, "mnt", paths.stepd_ns}, Keep{init, "mnt", paths.tasks_ns},
          Keep{init, "pid", paths.pid_ns}, Keep{init, "ipc", paths.ipc_ns}}) {
        if (const int err = bind_namespace_of(keep.pid, keep.kind, keep.path); err != 0) {
            return err;
        }
        own.made(keep.path);
    }
    return 0;
}

void unmount_own(const std::string &path, OwnMounts &own) {
    own.dropping(path);
    (void)::umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
}

void drop_namespaces(const JobPaths &paths, OwnMounts &own) {
    for (const auto *path : namespace_files(paths)) {
        unmount_own(*path, own);
    }
}

// One creator pinned to `cpu`; on success the namespaces are kept and the
// init is recorded. `bind_errno` tells why they could not be kept.
Status attempt_make(const JobCreatorInputs &in, const JobPaths &paths, int cpu, int &bind_errno,
                    OwnMounts &own) {
    bind_errno = 0;
    const bool refresh = in.job_pid >= 0;
    BuilderChild creator;
    if (auto s = creator.start(
            "the job's namespace builder", in.config.build_timeout_s,
            {in.node_ns, in.tmp_dir, in.mps_shm, in.old_stepd, in.job_pid},
            [&](int report_fd, int hold_fd) { run_job_creator(in, cpu, report_fd, hold_fd); });
        !s.ok()) {
        return s;
    }
    creator.read_report();
    const std::string &text = creator.report();
    std::int64_t claimed = 0;
    std::optional<InitId> init;
    if (creator.reported_in_time() && job_creator_claims_success(text)) {
        BuilderEnd so_far; // the exit status is judged below
        if (judge_job_creator(text, so_far, claimed).ok()) {
            init = identify(static_cast<pid_t>(claimed));
            if (!init) {
                bind_errno = ESRCH;
            } else if (refresh) {
                bind_errno = replace_views(creator.pid(), init->pid, paths, own);
            } else {
                bind_errno = keep_namespaces(creator.pid(), init->pid, paths, own);
            }
        }
    }
    if (init && bind_errno == 0) {
        creator.tell("k"); // the init lives on (a view maker ends)
    }
    const BuilderEnd end = creator.finish();
    Status judged = judge_job_creator(text, end, claimed);
    if (judged.ok() && bind_errno == 0 && init) {
        return refresh ? Status() : write_file_atomically(paths.init, format_init_id(*init));
    }
    if (refresh) {
        // The job keeps its PID namespace and init; views half replaced go.
        for (const auto *path : {&paths.stepd_ns, &paths.tasks_ns}) {
            unmount_own(*path, own);
        }
        return judged;
    }
    drop_namespaces(paths, own);
    if (init) {
        kill_init(*init);
    }
    return judged;
}

// The job's own directory below job_tmp=DIR, made root-owned 1777 like /tmp,
// opened O_PATH here, in the node's own view; the creator child clones it.
Status make_job_tmp_dir(const Config &config, std::uint32_t job, Fd &out) {
    if (auto s = ensure_root_dir(config.job_tmp_dir, 0700); !s.ok()) {
        return Status::failure("job_tmp= directory: " + s.message());
    }
    Fd base;
    if (auto s = open_root_owned_dir(config.job_tmp_dir, base); !s.ok()) {
        return Status::failure("job_tmp= directory: " + s.message());
    }
    const std::string name = job_tmp_name(job);
    (void)remove_tree(base.get(), name); // a leftover of a crashed job
    if (::mkdirat(base.get(), name.c_str(), 01777) != 0 ||
        ::fchmodat(base.get(), name.c_str(), 01777, 0) != 0) {
        return Status::from_errno("mkdir " + config.job_tmp_dir + "/" + name);
    }
    out.reset(::openat(base.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    return out.valid() ? Status() : Status::from_errno("open " + config.job_tmp_dir + "/" + name);
}

// With the job's lock held exclusively: makes the namespaces from scratch.
Status make_job(const Config &config, const NodeNamespace &node, std::uint32_t job,
                const JobPaths &paths, OwnMounts &own) {
    if (const auto old = read_init(paths)) {
        kill_init(*old);
    }
    (void)::unlink(paths.ready.c_str());
    for (const auto *path : namespace_files(paths)) {
        own.dropping(*path);
        if (auto s = reset_mount_point_file(*path); !s.ok()) {
            return s;
        }
    }
    JobCreatorInputs in{config, job, node.fd.get(), -1, -1, {}};
    if (auto s = load_proc_options(config, in.proc); !s.ok()) {
        return s;
    }
    Fd tmp_dir;
    if (config.job_tmp == JobTmp::Directory) {
        if (auto s = make_job_tmp_dir(config, job, tmp_dir); !s.ok()) {
            return s;
        }
        in.tmp_dir = tmp_dir.get();
    }
    Fd mps_shm;
    if (auto s = open_mps_shm(config, mps_shm); !s.ok()) {
        return Status::failure(s.message() + "; " + kMpsShmFix);
    }
    in.mps_shm = mps_shm.get();
    int bind_errno = 0;
    for (const int cpu : cpus_to_try()) {
        if (auto s = attempt_make(in, paths, cpu, bind_errno, own); !s.ok()) {
            return s;
        }
        if (bind_errno != ELOOP) {
            break;
        }
    }
    if (bind_errno != 0) {
        return Status::from_errno("keeping the job's namespaces in " + paths.dir, bind_errno);
    }
    if (auto s = write_file_atomically(paths.jail, file_id_text(node.jail)); !s.ok()) {
        return s;
    }
    // Recorded on the volume before the job's first step enters it.
    if (auto s = save_hold(job_hold_path(config.state_dir, job), node.generation); !s.ok()) {
        return s;
    }
    if (auto s = record_generation_holds(config); !s.ok()) {
        return s;
    }
    return write_file_atomically(paths.ready, node.stamp);
}

// With the job's lock held exclusively, for a running job (`current`) whose
// views were made from a node namespace that has since been rebuilt (a bind
// source, a setting, the node's /proc or GPU driver changed): makes its views
// anew from the node's current namespace, keeping its PID namespace and init
// (so its processes live on and later steps see them) and its /tmp and
// /dev/shm. Steps already running keep the views they entered.
Status refresh_job(const Config &config, const NodeNamespace &node, std::uint32_t job,
                   const JobPaths &paths, const JobNamespace &current, OwnMounts &own) {
    JobCreatorInputs in{config, job, node.fd.get(), -1, -1, {}};
    in.old_stepd = current.stepd.get();
    in.job_pid = current.pid.get();
    if (auto s = load_proc_options(config, in.proc); !s.ok()) {
        return s;
    }
    int bind_errno = 0;
    for (const int cpu : cpus_to_try()) {
        if (auto s = attempt_make(in, paths, cpu, bind_errno, own); !s.ok()) {
            return Status::failure("the node's jail namespace changed under the running job and "
                                   "making the job's views anew failed (its next step tries "
                                   "again): " +
                                   s.message());
        }
        if (bind_errno != ELOOP) {
            break;
        }
    }
    if (bind_errno != 0) {
        return Status::from_errno("keeping the job's new views in " + paths.dir, bind_errno);
    }
    return write_file_atomically(paths.ready, node.stamp);
}

Status lock_job(const Config &config, const JobPaths &paths, Fd &lock) {
    if (auto s = ensure_root_dir(jobs_dir(config.state_dir), 0700); !s.ok()) {
        return Status::failure("state directory: " + s.message());
    }
    if (auto s = ensure_root_dir(paths.dir, 0700); !s.ok()) {
        return Status::failure("state directory: " + s.message());
    }
    return lock_state(paths.dir, lock, LOCK_EX);
}

// ---- deleting it ----

// Takes the job's lock, when the job has state here. `held` is false when it
// has none, or when it was deleted while this process waited for the lock
// (the lock file held is no longer the job's): nothing to delete then.
Status lock_existing_job(const JobPaths &paths, Fd &lock, bool &held) {
    held = false;
    struct stat st {};
    if (::lstat(paths.dir.c_str(), &st) != 0) {
        return {};
    }
    if (auto s = lock_state(paths.dir, lock, LOCK_EX); !s.ok()) {
        return ::lstat(paths.dir.c_str(), &st) != 0 ? Status() : s;
    }
    struct stat locked {};
    struct stat named {};
    held = ::fstat(lock.get(), &locked) == 0 && ::lstat(paths.lock.c_str(), &named) == 0 &&
           locked.st_dev == named.st_dev && locked.st_ino == named.st_ino;
    return {};
}

// job_tmp=DIR: the job's directory, removed without following anything a
// user made in it.
Status remove_job_tmp(const Config &config, std::uint32_t job) {
    if (config.job_tmp != JobTmp::Directory) {
        return {};
    }
    Fd base;
    if (auto s = open_root_owned_dir(config.job_tmp_dir, base); !s.ok()) {
        return Status::failure("job_tmp= directory: " + s.message());
    }
    return remove_tree(base.get(), job_tmp_name(job));
}

// With the job's lock held and its init gone: its namespace files, its
// job_tmp= directory and its state directory go, and what users with no
// job left on the node left in gpu_mps_shm= (mps_shm_cleanup.hpp). A job_tmp= directory that
// stays is an orphan then (orphaned_job_tmp_dirs): the returned status says
// why it stayed.
Status remove_job(const Config &config, std::uint32_t job, const JobPaths &paths, OwnMounts &own) {
    drop_namespaces(paths, own);
    for (const auto *path : namespace_files(paths)) {
        (void)::unlink(path->c_str());
    }
    (void)::unlink(paths.init.c_str());
    (void)::unlink(paths.ready.c_str());
    (void)::unlink(paths.user.c_str());
    (void)::unlink(paths.jail.c_str());
    (void)::unlink(job_hold_path(config.state_dir, job).c_str());
    Status removed = remove_job_tmp(config, job);
    (void)::unlink(paths.lock.c_str());
    (void)::rmdir(paths.dir.c_str());
    clean_mps_shm(config);
    return removed;
}

// The holds of jobs with no state left on the node (core/node/
// generation_holds.hpp): they would keep a generation from being pruned.
void drop_orphaned_holds(const std::string &state) {
    const std::string dir_path = holds_dir(state);
    DIR *dir = ::opendir(dir_path.c_str());
    if (dir == nullptr) {
        return;
    }
    std::vector<std::string> orphans;
    while (const dirent *e = ::readdir(dir)) {
        const std::string_view name = e->d_name;
        const auto job = name.starts_with("job.") ? job_of_entry(name.substr(4)) : std::nullopt;
        struct stat st {};
        if (job && ::lstat(job_paths(state, *job).dir.c_str(), &st) != 0) {
            orphans.emplace_back(name);
        }
    }
    ::closedir(dir);
    for (const auto &name : orphans) {
        (void)::unlink((dir_path + "/" + name).c_str());
    }
}

// job_tmp=DIR: the jobs whose directory is there without any state of the
// job on the node (left when a removal failed, or by a node crash). A job
// being made has its state directory before its job_tmp= directory.
std::vector<std::uint32_t> orphaned_job_tmp_dirs(const Config &config) {
    std::vector<std::uint32_t> jobs;
    Fd base;
    if (config.job_tmp != JobTmp::Directory ||
        !open_root_owned_dir(config.job_tmp_dir, base).ok()) {
        return jobs;
    }
    DIR *dir = ::fdopendir(::openat(base.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir == nullptr) {
        return jobs;
    }
    while (const dirent *e = ::readdir(dir)) {
        const std::string_view name = e->d_name;
        constexpr std::string_view prefix = "job-"; // job_tmp_name
        if (name.substr(0, prefix.size()) != prefix) {
            continue;
        }
        const auto job = job_of_entry(name.substr(prefix.size()));
        struct stat st {};
        if (job && job_tmp_name(*job) == name &&
            ::lstat(job_paths(config.state_dir, *job).dir.c_str(), &st) != 0 && errno == ENOENT) {
            jobs.push_back(*job);
        }
    }
    ::closedir(dir);
    return jobs;
}

// This process, seen in the node's /proc (its pid there, not 1).
std::optional<InitId> self_in(int node_proc) {
    char pid[32] = {};
    const ssize_t n = ::readlinkat(node_proc, "self", pid, sizeof(pid) - 1);
    if (n <= 0) {
        return std::nullopt;
    }
    const std::string name(pid, static_cast<std::size_t>(n));
    const Fd stat(::openat(node_proc, (name + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
    std::string text;
    if (!stat.valid() || !read_whole_file(stat.get(), "stat", text, 4096).ok()) {
        return std::nullopt;
    }
    const auto start = start_time_of_stat(text);
    return start ? parse_init_id(name + " " + std::to_string(*start)) : std::nullopt;
}

// With the job's lock held: its namespaces made when it has none, or its
// views made anew when they come from an older node namespace.
Status make_or_refresh(const Config &config, const NodeNamespace &node, std::uint32_t job,
                       const JobPaths &paths, std::string &made_from, OwnMounts &own) {
    JobNamespace current;
    if (!open_existing(paths, current, &made_from)) {
        struct stat st {};
        const std::string ended = how_the_init_ended(paths);
        if (::lstat(paths.ready.c_str(), &st) == 0 && !ended.empty()) {
            // Made, and its init ended under it (killed by hand or by the
            // OOM killer): every process of the job and its /tmp went too.
            const Status tmp = remove_job(config, job, paths, own);
            return Status::failure(
                "job " + std::to_string(job) + " ended on this node before this step: " + ended +
                ", and with it the job's processes and its /tmp; its namespaces were deleted" +
                (tmp.ok() ? ""
                          : " (its job_tmp= directory is left for later: " + tmp.message() + ")") +
                ". Requeue or resubmit the job; the node's kernel log names an OOM kill");
        }
        return make_job(config, node, job, paths, own);
    }
    if (current.jail && !(*current.jail == node.jail)) {
        // Begun on another jail (a generation that was live then): the job
        // keeps it, and its views whole, until it ends.
        return {};
    }
    if (made_from != node.stamp) {
        // Made from a node namespace that has been rebuilt since (or meanwhile
        // by another step or slurmd, from the current one).
        return refresh_job(config, node, job, paths, current, own);
    }
    return {};
}

} // namespace

void end_job_from_its_init(const Config &config, std::uint32_t job, int node_mnt, int node_proc) {
    if (::setns(node_mnt, CLONE_NEWNS) != 0) {
        return;
    }
    const JobPaths paths = job_paths(config.state_dir, job);
    Fd lock;
    bool held = false;
    if (!lock_existing_job(paths, lock, held).ok() || !held) {
        return;
    }
    const auto self = self_in(node_proc);
    if (!self || read_init(paths) != self) {
        return; // the job was made anew meanwhile: that init is not this one
    }
    OwnMounts own;
    (void)remove_job(config, job, paths, own);
    lock.reset();
    own.let_through(config);
}

bool open_existing_job_namespace(const std::string &state_dir, std::uint32_t job,
                                 JobNamespace &out) {
    return open_existing(job_paths(state_dir, job), out);
}

Status open_running_job_namespace(const std::string &state_dir, std::uint32_t job,
                                  JobNamespace &out) {
    if (!open_existing(job_paths(state_dir, job), out)) {
        return Status::failure("job " + std::to_string(job) +
                               " has no running namespaces on this node (it has not started "
                               "here, or it has ended)");
    }
    return {};
}

std::vector<std::uint32_t> running_jobs(const std::string &state_dir) {
    std::vector<std::uint32_t> jobs;
    DIR *dir = ::opendir(jobs_dir(state_dir).c_str());
    if (dir == nullptr) {
        return jobs;
    }
    while (const dirent *e = ::readdir(dir)) {
        const auto job = job_of_entry(e->d_name);
        JobNamespace ns;
        if (job && open_existing(job_paths(state_dir, *job), ns)) {
            jobs.push_back(*job);
        }
    }
    ::closedir(dir);
    return jobs;
}

Status open_job_namespace(const Config &config, const NodeNamespace &node, std::uint32_t job,
                          JobNamespace &out) {
    const JobPaths paths = job_paths(config.state_dir, job);
    std::string made_from;
    {
        // Shared: no step replaces the job's views while they are opened.
        Fd shared = open_regular(paths.lock, O_RDWR);
        if (shared.valid() && ::flock(shared.get(), LOCK_SH) == 0 &&
            open_existing(paths, out, &made_from) && made_from == node.stamp) {
            return {};
        }
    }
    out = {};
    Fd lock;
    if (auto s = lock_job(config, paths, lock); !s.ok()) {
        return s;
    }
    OwnMounts own;
    Status made = make_or_refresh(config, node, job, paths, made_from, own);
    own.let_through(config);
    if (!made.ok()) {
        return made;
    }
    if (!open_existing(paths, out)) {
        return Status::failure("the job's namespaces in " + paths.dir +
                               " vanished right after they were made");
    }
    return {};
}

Status delete_job_namespace(const Config &config, std::uint32_t job, std::string *left_behind) {
    const JobPaths paths = job_paths(config.state_dir, job);
    Fd lock;
    bool held = false;
    if (auto s = lock_existing_job(paths, lock, held); !s.ok() || !held) {
        return s; // or nothing on the node, or deleted meanwhile (by its init)
    }
    if (const auto init = read_init(paths)) {
        kill_init(*init);
    }
    OwnMounts own;
    const Status tmp_removed = remove_job(config, job, paths, own);
    own.let_through(config);
    if (!tmp_removed.ok() && left_behind != nullptr) {
        *left_behind = tmp_removed.message();
    }
    return {};
}

std::vector<std::uint32_t> delete_stale_jobs(const Config &config) {
    std::vector<std::uint32_t> deleted;
    std::vector<std::uint32_t> jobs;
    if (DIR *dir = ::opendir(jobs_dir(config.state_dir).c_str())) {
        while (const dirent *e = ::readdir(dir)) {
            if (const auto job = job_of_entry(e->d_name)) {
                jobs.push_back(*job);
            }
        }
        ::closedir(dir);
    }
    const NodeProcesses seen = scan_processes();
    for (const auto job : jobs) {
        if (!job_is_alive(job_paths(config.state_dir, job), job, seen) &&
            delete_job_namespace(config, job).ok()) {
            deleted.push_back(job);
        }
    }
    for (const auto job : orphaned_job_tmp_dirs(config)) {
        if (remove_job_tmp(config, job).ok() &&
            std::find(deleted.begin(), deleted.end(), job) == deleted.end()) {
            deleted.push_back(job);
        }
    }
    drop_orphaned_holds(config.state_dir);
    return deleted;
}

} // namespace sjail