// SPDX-License-Identifier: Apache-2.0
#include "sjail/sys/job/job_creator.hpp"

#include "sjail/core/builder_report.hpp"
#include "sjail/sys/child_process.hpp"
#include "sjail/sys/fd.hpp"
#include "sjail/sys/job/job_init.hpp"
#include "sjail/sys/ns_bind.hpp"
#include "sjail/sys/private_mounts.hpp"
#include "sjail/sys/run_view.hpp"

#include <fcntl.h>
#include <functional>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sjail {
namespace {

Status mount_job_tmp(const JobCreatorInputs &in, int tmp_tree) {
    switch (in.config.job_tmp) {
    case JobTmp::Node:
        return {}; // the node view's /tmp stays
    case JobTmp::Tmpfs:
        return mount_private_tmpfs(in.config.job_tmp_size, "/tmp");
    case JobTmp::Directory:
        break;
    }
    return attach_mount(tmp_tree, "/tmp");
}

// var_tmp=job: the job's /var/tmp is its /tmp (private_mounts.hpp).
Status share_var_tmp(const Config &config) {
    return config.var_tmp == VarTmp::Job ? share_tmp_as_var_tmp() : Status();
}

// A detached copy of the directory `dir`, nosuid and nodev; `what` names it
// in an error.
Status clone_tree(int dir, const char *what, Fd &out) {
    out.reset(::open_tree(dir, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if (!out.valid() || ::mount_setattr(out.get(), "", AT_EMPTY_PATH, &attr, sizeof(attr)) != 0) {
        return Status::from_errno(std::string("binding ") + what);
    }
    return {};
}

// The stepd view, once the init copied it for the tasks' view: nothing can
// be executed there, so that what slurmstepd forks for the step after the
// tasks (a task epilog) runs only once it joined the tasks' view.
Status make_stepd_view_noexec() {
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_NOEXEC;
    if (::mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &attr, sizeof(attr)) != 0) {
        return Status::from_errno("making the job's stepd view noexec");
    }
    return {};
}

// In the creator, once its children go to the job's PID namespace: forks
// the process that makes and holds the tasks' view (`run`, which never
// returns, given its report and lifeline fds), waits for its report, then
// closes the stepd view to execution. `keep_out` is the holder's lifeline.
Status start_tasks_view_holder(const char *what, const std::function<void(int, int)> &run,
                               pid_t &pid, Fd &keep_out) {
    Pipe ready;
    Pipe keep;
    if (auto s = make_pipe(ready); !s.ok()) {
        return s;
    }
    if (auto s = make_pipe(keep); !s.ok()) {
        return s;
    }
    pid = ::fork();
    if (pid == 0) {
        ready.read.reset();
        keep.write.reset();
        run(ready.write.get(), keep.read.get());
        ::_exit(1);
    }
    if (pid < 0) {
        return Status::from_errno(std::string("fork ") + what);
    }
    ready.write.reset();
    keep.read.reset();
    keep_out = std::move(keep.write);
    const std::string line = read_line(ready.read.get());
    if (line != "ok\n") {
        return Status::failure(line.rfind("error ", 0) == 0 ? line.substr(6, line.size() - 7)
                                                            : std::string(what) + " died");
    }
    return make_stepd_view_noexec();
}

// In the creator child: a new mount namespace copied from the node's jail
// namespace `node_ns`, receiving the node's later mount changes (a slave):
// the job's stepd view, before what is the job's own is mounted in it.
Status make_view_from_node(int node_ns) {
    if (::setns(node_ns, CLONE_NEWNS) != 0) {
        return Status::from_errno("entering the node's jail namespace");
    }
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
        return Status::from_errno("making the job's view");
    }
    return {};
}

// A detached copy of the mount at `path` (the job's /tmp or /dev/shm in its
// current view): the same filesystem, so what the job wrote there stays.
Status clone_mount(const char *path, Fd &out) {
    Fd where;
    if (auto s = open_mount_point(path, where); !s.ok()) {
        return s;
    }
    out.reset(::open_tree(where.get(), "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
    return out.valid() ? Status() : Status::from_errno(std::string("keeping the job's ") + path);
}

// In the creator child, for a running job whose node namespace was rebuilt:
// a new stepd view from the new node namespace with the job's own /tmp,
// /dev/shm and /run/lock taken over from its current view, then, in the job's PID
// namespace (whose init lives on), a new tasks' view. Reports the pid of the
// process holding that view.
Status refresh_in_child(const JobCreatorInputs &in, pid_t &maker, Fd &keep_maker) {
    Fd tmp_tree;
    Fd shm_tree;
    if (::setns(in.old_stepd, CLONE_NEWNS) != 0) {
        return Status::from_errno("entering the job's current view");
    }
    if (in.config.job_tmp != JobTmp::Node) {
        if (auto s = clone_mount("/tmp", tmp_tree); !s.ok()) {
            return s;
        }
    }
    if (auto s = clone_mount("/dev/shm", shm_tree); !s.ok()) {
        return s;
    }
    Fd run_lock_tree;
    if (in.config.run == RunMode::Node) {
        if (auto s = clone_mount("/run/lock", run_lock_tree); !s.ok()) {
            return s;
        }
    }
    if (auto s = make_view_from_node(in.node_ns); !s.ok()) {
        return s;
    }
    if (tmp_tree.valid()) {
        if (auto s = attach_mount(tmp_tree.get(), "/tmp"); !s.ok()) {
            return s;
        }
    }
    if (auto s = share_var_tmp(in.config); !s.ok()) {
        return s;
    }
    if (auto s = attach_mount(shm_tree.get(), "/dev/shm"); !s.ok()) {
        return s;
    }
    if (run_lock_tree.valid()) {
        if (auto s = attach_mount(run_lock_tree.get(), "/run/lock"); !s.ok()) {
            return s;
        }
    }
    if (::setns(in.job_pid, CLONE_NEWPID) != 0) {
        return Status::from_errno("entering the job's PID namespace");
    }
    return start_tasks_view_holder(
        "the job's view maker",
        [&in](int ready_fd, int keep_fd) { run_tasks_view_maker(in.proc, ready_fd, keep_fd); },
        maker, keep_maker);
}

// In the creator child: the stepd view, then the job's PID namespace and its
// init (which makes the tasks' view). Reports the init's pid; `keep_init`
// is the init's lifeline (see run_job_init).
Status make_in_child(const JobCreatorInputs &in, pid_t &init, Fd &keep_init) {
    // The init's lifeline (job_init.hpp), from this process's own view: the
    // node's processes, and the view where the job's state lives.
    const Fd node_proc(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    const Fd node_mnt(::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC));
    if (!node_proc.valid() || !node_mnt.valid()) {
        return Status::from_errno("opening the node's /proc for the job's init");
    }
    // Cloned here, on this process's CPU, just before the namespace it goes
    // into is made: the kernel refuses to attach a detached tree that looks
    // newer than the namespace (ids come from per-CPU batches, ns_bind.hpp).
    Fd tmp_tree;
    if (in.tmp_dir >= 0) {
        if (auto s = clone_tree(in.tmp_dir, "the job's job_tmp= directory", tmp_tree); !s.ok()) {
            return s;
        }
    }
    Fd mps_shm_tree;
    if (in.mps_shm >= 0) {
        if (auto s =
                clone_tree(in.mps_shm, "the MPS daemon's /dev/shm (gpu_mps_shm=)", mps_shm_tree);
            !s.ok()) {
            return s;
        }
    }
    if (auto s = make_view_from_node(in.node_ns); !s.ok()) {
        return s;
    }
    if (auto s = mount_job_tmp(in, tmp_tree.get()); !s.ok()) {
        return s;
    }
    if (auto s = share_var_tmp(in.config); !s.ok()) {
        return s;
    }
    // /dev/shm: the MPS daemon's (gpu_mps_shm=) where the node has it, else the job's own.
    if (auto s = mps_shm_tree.valid() ? attach_mount(mps_shm_tree.get(), "/dev/shm")
                                      : mount_private_tmpfs(in.config.job_shm_size, "/dev/shm");
        !s.ok()) {
        return s;
    }
    // run=node: the node's /run is shared by its jobs; its one place users
    // may write, /run/lock, is the job's own (sys/run_view.hpp).
    if (in.config.run == RunMode::Node) {
        if (auto s = mount_private_tmpfs(kJobRunLockSize, "/run/lock", kJobRunLockInodes);
            !s.ok()) {
            return s;
        }
    }
    // System V IPC and POSIX message queues are the job's own too, and go
    // with it: the init holds the namespace, the tasks join it.
    if (::unshare(CLONE_NEWPID | CLONE_NEWIPC) != 0) {
        return Status::from_errno("making the job's PID and IPC namespaces");
    }
    return start_tasks_view_holder(
        "the job's init",
        [&](int ready_fd, int keep_fd) {
            JobLifeline lifeline{in.job, node_proc.get(), node_mnt.get(), {}};
            lifeline.end_job = [&in, &lifeline] {
                end_job_from_its_init(in.config, in.job, lifeline.node_mnt, lifeline.node_proc);
            };
            run_job_init(in.proc, ready_fd, keep_fd, lifeline);
        },
        init, keep_init);
}

} // namespace

void run_job_creator(const JobCreatorInputs &in, int cpu, int report_fd, int hold_fd) noexcept {
    Fd keep_init;
    pid_t init = 0;
    try {
        let_parent_bind_namespaces();
        pin_to_cpu(cpu);
        const Status s = in.job_pid >= 0 ? refresh_in_child(in, init, keep_init)
                                         : make_in_child(in, init, keep_init);
        write_all(report_fd,
                  s.ok() ? job_creator_success_line(init) : builder_failure_line(s.message()));
    } catch (...) {
        write_all(report_fd, "sjail-builder error out of memory making the job's namespaces\n");
    }
    if (finish_report(report_fd, hold_fd) == 'k' && keep_init.valid()) {
        write_all(keep_init.get(), "k");
    }
    if (in.job_pid >= 0 && init > 0) {
        // The view maker ends now (its view kept or not); reaped here, so no
        // zombie of it shows in the job's /proc.
        keep_init.reset();
        while (::waitpid(init, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    ::_exit(0);
}

} // namespace sjail
