// SPDX-License-Identifier: Apache-2.0
// The processes of a job on a node: its recorded init (whether it runs, how
// it ended, ending it), and whether anything of the job is left on the node.
#pragma once

#include "sjail/core/job/job_layout.hpp"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <sys/types.h>

namespace sjail {

// The job's init as recorded in its state directory, when it is.
std::optional<InitId> read_init(const JobPaths &paths);

// Running, and not ended: a killed init that waits to be reaped is still in
// /proc with its start time, but its PID namespace takes no process (a fork
// into it fails with ENOMEM).
bool is_running(const InitId &id);

// How the job's recorded init ended, when it has (an ended process that
// waits to be reaped tells): "" while it runs or when nothing was recorded.
std::string how_the_init_ended(const JobPaths &paths);

// The process `pid` with its start time, while it exists.
std::optional<InitId> identify(pid_t pid);

// Ends the init (and so the job's every process), checking through a pidfd
// that the pid is still the init's. SIGTERM first: the init kills the
// job's processes itself and frees those a FUSE daemon holds (job_init.hpp);
// SIGKILL when it has not ended within a few seconds.
void kill_init(const InitId &id);

// For every PID namespace: how many processes it holds; and which jobs still
// have a slurmstepd (root's).
struct NodeProcesses {
    std::multiset<ino_t> pid_namespaces;
    std::set<std::uint32_t> jobs_with_stepd;
};

NodeProcesses scan_processes();

// Whether the job still has a slurmstepd, or a process besides its init,
// on the node.
bool job_is_alive(const JobPaths &paths, std::uint32_t job, const NodeProcesses &seen);

} // namespace sjail
