// SPDX-License-Identifier: Apache-2.0
// A benchmark "node": a forked process with its own private mount namespace
// holding a chosen number of host mounts, a small jail, and one prepared
// node jail namespace (sjail::acquire_node_namespace) per admin-bind count.
// The driver sends it requests; it answers with timings in nanoseconds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace bench {

enum class Op : std::uint32_t {
    // In a forked child: acquire_node_namespace (through the node watch once
    // it is armed), enter_namespace, then the per-task check. Four values per
    // sample: prepare, enter, check, and 1 when the node watch was used.
    Entry = 1,
    // In the node process: invalidate the stamp and acquire, which rebuilds
    // the node namespace (unshare, mounts, pivot_root, nsfs bind). One value.
    Build = 2,
    // In a forked child: the design the node namespace replaces, a fresh
    // namespace per task (unshare + build_jail_view). One value.
    Fresh = 3,
    // In a forked child: sjail::current_stamp, the stamp every step computes
    // to see whether the kept namespace is current (jail ownership walk, every
    // bind source resolved and identified). One value.
    Stamp = 4,
    // In a forked child, as slurmstepd does per step since each job has its
    // own namespaces: enter_job_for_step (the job's namespaces exist, as for
    // every step after a job's first), start_children_in_job (the job's PID
    // namespace for the fork window), then, in a task child born there,
    // enter_tasks_view and the cwd check. Three values: step, pid, task.
    JobEntry = 5,
    // In the node process: a new job's namespaces made (its first step or
    // job_container create) and deleted (job end). Two values: make, delete.
    JobMake = 6,
    // In a forked child that has done nothing else yet (as the entry
    // samples): the floor alone, setns into the kept namespace (its fd
    // opened untimed) and the per-task check. Two values: enter, check.
    Floor = 7,
};

class Env {
  public:
    // Forks the node process. `host_mounts` is the size of its mount table
    // (mountinfo lines) while measuring; `binds` lists the admin-bind counts
    // it prepares a config for.
    static std::unique_ptr<Env> start(int host_mounts, const std::vector<int> &binds,
                                      std::string &error);
    Env(const Env &) = delete;
    Env &operator=(const Env &) = delete;
    ~Env();

    // Mountinfo lines in the node's namespace once set up.
    [[nodiscard]] int actual_mounts() const { return actual_mounts_; }
    // Why the node process has no node watch ("" when it has one): steps then
    // check fully, as on kernels before Linux 6.15.
    [[nodiscard]] const std::string &no_watch() const { return no_watch_; }

    // Runs `count` samples of `op` for the config with `binds` admin binds and
    // appends their values. Returns "" or what went wrong.
    std::string run(Op op, int binds, std::uint32_t count, std::vector<std::int64_t> &values);

  private:
    Env(pid_t pid, int sock) : pid_(pid), sock_(sock) {}
    pid_t pid_;
    int sock_;
    int actual_mounts_ = 0;
    std::string no_watch_;
};

} // namespace bench
