// SPDX-License-Identifier: Apache-2.0
// Where a job's namespaces live in the state directory. Pure.
//
//   STATE/jobs/JOB/stepd   nsfs: the view slurmstepd's thread joins (the
//                          jail, the job's /tmp and /dev/shm, the node's /proc)
//   STATE/jobs/JOB/tasks   nsfs: the view of the job's own processes (the
//                          same, with the job's own /proc)
//   STATE/jobs/JOB/pid     nsfs: the job's PID namespace
//   STATE/jobs/JOB/init    "PID STARTTIME" of the job's init (PID 1 inside)
//   STATE/jobs/JOB/lock    flock: exclusive to create and to delete
//   STATE/jobs/JOB/ready   written last: the namespaces are complete; it holds
//                          the stamp of the node namespace the views were
//                          made from (a step whose node namespace has another
//                          stamp makes the job's views anew)
#pragma once

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
    std::string init;
    std::string lock;
    std::string ready;
};

std::string jobs_dir(const std::string &state);
JobPaths job_paths(const std::string &state, std::uint32_t job);

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

// Field 22 (starttime) of a /proc/PID/stat line; the command name (field 2)
// may hold spaces and parentheses, so fields are counted after its last ')'.
std::optional<std::uint64_t> start_time_of_stat(std::string_view stat);

// Where a process's command line lies in its memory: arg_start and arg_end,
// fields 48 and 49 of /proc/PID/stat. A forked init overwrites it so that it
// is not shown (and not taken) for the daemon it was forked from.
struct ArgArea {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    bool operator==(const ArgArea &) const = default;
};
std::optional<ArgArea> arg_area_of_stat(std::string_view stat);

} // namespace sjail
