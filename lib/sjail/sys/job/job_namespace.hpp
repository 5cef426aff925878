// SPDX-License-Identifier: Apache-2.0
// A job's namespaces on a node, made from the node's jail namespace.
//
// Every process of a job on a node lives in a PID namespace of its own, so a
// task sees and can signal only its own job's processes, and /proc/PID/root
// of anything outside the job is out of reach. The job also gets its own
// /tmp (job_tmp=) and /dev/shm. Two mount namespaces serve the job:
//   stepd  slurmstepd's thread joins it: the node's view plus the job's /tmp
//          and /dev/shm; its /proc still shows the node's PIDs, which Slurm
//          itself reads (proctrack, accounting) with host PIDs;
//   tasks  the job's processes: the same, with the job's own /proc.
// Both share one /tmp and one /dev/shm (the same mounts), so a socket
// slurmstepd creates in /tmp (PMIx) is there for the tasks.
//
// The namespaces are made once per job and node by the job's first step
// there (the extern step under PrologFlags=Contain), whose slurmstepd reads
// plugstack.conf afresh, and shared by every step of the job. They are deleted when the
// job ends on the node (job_container or SPANK's job epilog), and, after a
// crash, at the next slurmd start. See job_layout.hpp for where they live.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/file_id.hpp"
#include "sjail/core/proc_options.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/fd.hpp"
#include "sjail/sys/node/node_namespace.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace sjail {

struct JobNamespace {
    Fd stepd; // mount namespace slurmstepd's thread joins
    Fd tasks; // mount namespace of the job's processes
    Fd pid;   // the job's PID namespace
    Fd ipc;   // the job's IPC namespace (not valid for a job made before it)
    // The jail its views show (STATE/jobs/JOB/jail): on a volume with
    // generations, the one the job began on; none for a job made before the
    // record was kept (its views show the node namespace's jail).
    std::optional<FileId> jail;
};

// Opens the job's namespaces below the state directory `state_dir` when they
// exist; false when they do not.
bool open_existing_job_namespace(const std::string &state_dir, std::uint32_t job,
                                 JobNamespace &out);

// Opens the job's namespaces, making them first (under the job's lock) when
// the job has none on this node yet. A job whose views come from an older
// node namespace of the same jail gets them made anew from `node`; a job on
// another jail (a generation that was live when it began) keeps its views
// whole: a job sees one jail for its whole life.
Status open_job_namespace(const Config &config, const NodeNamespace &node, std::uint32_t job,
                          JobNamespace &out);

// Opens the namespaces of a job that is running on this node, never making
// them (an SSH session adopted into the job joins what its steps use).
Status open_running_job_namespace(const std::string &state_dir, std::uint32_t job,
                                  JobNamespace &out);

// The jobs that have running namespaces on this node (below `state_dir`).
std::vector<std::uint32_t> running_jobs(const std::string &state_dir);

// Ends the job on this node: its init is killed, and with it every process
// still in the job; its namespaces are dropped and its private /tmp removed.
// Deleting a job that has nothing on the node is not an error. A job_tmp=
// directory that cannot be removed now (a mount a user cannot make, a file
// system error) does not fail the deletion: it is left for the next pass
// of delete_stale_jobs, and `left_behind` says why.
Status delete_job_namespace(const Config &config, std::uint32_t job,
                            std::string *left_behind = nullptr);

// Deletes the namespaces of every job that has no process left on this node
// (after slurmd or slurmstepd was killed). Returns the jobs deleted.
std::vector<std::uint32_t> delete_stale_jobs(const Config &config);

} // namespace sjail
