// SPDX-License-Identifier: Apache-2.0
// Where a job's namespaces live in the state directory. Pure.
//
//   STATE/jobs/JOB/stepd   nsfs: the view slurmstepd's thread joins (the
//                          jail, the job's /tmp and /dev/shm, the node's /proc)
//   STATE/jobs/JOB/tasks   nsfs: the view of the job's own processes (the
//                          same, with the job's own /proc)
//   STATE/jobs/JOB/pid     nsfs: the job's PID namespace
//   STATE/jobs/JOB/ipc     nsfs: the job's IPC namespace (System V IPC, POSIX
//                          message queues): none for a job made by a version
//                          before it
//   STATE/jobs/JOB/init    "PID STARTTIME" of the job's init (PID 1 inside)
//   STATE/jobs/JOB/lock    flock: exclusive to create and to delete
//   STATE/jobs/JOB/ready   written last: the namespaces are complete; it holds
//                          the stamp digest of the node namespace the views
//                          were made from (a step whose node namespace has
//                          another stamp makes the job's views anew)
//   STATE/jobs/JOB/jail    "DEV:INO" of the jail the job's views show: on a
//                          volume with generations, the one that was live when
//                          the job began on the node, which it keeps (none for
//                          a job made by a version before it)
#pragma once

#include "sjail/core/proc_stat.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace sjail {

struct JobPaths {
    std::string dir;
    std::string stepd_ns;
    std::string tasks_ns;
    std::string pid_ns;
    std::string ipc_ns;
    std::string init;
    std::string lock;
    std::string ready;
    std::string user; // whose job it is (sys/job/job_user.hpp)
    std::string jail; // the jail its views show
};

std::string jobs_dir(const std::string &state);
JobPaths job_paths(const std::string &state, std::uint32_t job);

// The files a job keeps its namespaces on (each an nsfs mount while it lives).
std::array<const std::string *, 4> namespace_files(const JobPaths &paths);

// The job a STATE/jobs entry is for, or nothing for any other name.
std::optional<std::uint32_t> job_of_entry(std::string_view name);

// A job's private directory below job_tmp=DIR.
std::string job_tmp_name(std::uint32_t job);

// The identity of the job's init: its pid and its start time (field 22 of
// /proc/PID/stat), so a reused pid is never taken for it.
struct InitId {
    pid_t pid = 0;
    std::uint64_t start_time = 0;
    bool operator==(const InitId &) const = default;
};
std::string format_init_id(const InitId &id);
std::optional<InitId> parse_init_id(std::string_view text);

// The step a slurmstepd runs, from its /proc/PID/cmdline ("slurmstepd:
// [JOB.STEP]" or "slurmstepd: [JOB.STEP SUFFIX]", NUL-terminated): the job,
// and whether it is the extern step.
// Nothing for any other command line.
struct StepdOf {
    std::uint32_t job = 0;
    bool extern_step = false;
    bool operator==(const StepdOf &) const = default;
};
std::optional<StepdOf> stepd_of_cmdline(std::string_view cmdline);

// How the job's init tells that its job is gone from the node (job_init.hpp).
// The init looks every kCheckEvery: the job is on the node while its PID
// namespace holds a process besides the init, or a slurmstepd of the job
// runs. The job is gone once neither was seen for a grace period:
//   kContainedGrace    when an extern step of the job was seen
//                      (PrologFlags=Contain): it lives as long as the
//                      job, so nothing left means the job ended;
//   kUncontainedGrace  otherwise: without an extern step an allocation may
//                      have nothing on the node between two steps (salloc),
//                      and its /tmp must outlast such a pause.
// The extern step is looked for when the init starts (its job is alive
// then) and during the first kLookForExtern.
class JobWatch {
  public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::chrono::seconds kCheckEvery{2};
    static constexpr std::chrono::seconds kContainedGrace{10};
    static constexpr std::chrono::seconds kUncontainedGrace{3600};
    static constexpr std::chrono::seconds kLookForExtern{30};

    explicit JobWatch(Clock::time_point start) : start_(start), last_seen_(start) {}

    // Whether this look needs the node's processes (slurmstepds): when the
    // namespace is empty, or while the extern step is still looked for.
    [[nodiscard]] bool wants_node_scan(Clock::time_point now, bool others_in_namespace) const;
    // One look: anything of the job seen, and whether an extern step was.
    void saw(Clock::time_point now, bool job_seen, bool extern_seen);
    [[nodiscard]] bool gone(Clock::time_point now) const;
    [[nodiscard]] bool contained() const { return contained_; }

  private:
    Clock::time_point start_;
    Clock::time_point last_seen_;
    bool contained_ = false;
};

} // namespace sjail
