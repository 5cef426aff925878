// SPDX-License-Identifier: Apache-2.0
// The creator of a job's namespaces on a node: the child process that makes
// them, under the build deadline, for job_namespace.cpp to keep.
//
// For a new job it makes the stepd view from the node's jail namespace, with
// the job's own /tmp, /dev/shm and (run=node) /run/lock, then the job's PID
// and IPC namespaces and their init (job_init.hpp), which makes the tasks'
// view. For a running job whose node namespace was rebuilt it makes a new
// stepd view with the job's own mounts taken over, and a new tasks' view in
// the job's PID namespace, whose init lives on.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/proc_options.hpp"

#include <cstdint>

namespace sjail {

struct JobCreatorInputs {
    const Config &config;
    std::uint32_t job = 0;
    int node_ns = -1;
    int tmp_dir = -1; // job_tmp=DIR: the job's directory (O_PATH)
    int mps_shm = -1; // gpu_mps_shm=DIR (O_PATH): the job's /dev/shm, when the node has it
    ProcOptions proc;
    // Set when the views of a running job are made anew (refresh_in_child):
    int old_stepd = -1; // its current stepd view, which holds its /tmp and /dev/shm
    int job_pid = -1;   // its PID namespace, kept
};

// The creator. Reports, then waits on `hold_fd`: a "k" from the caller (it
// kept the namespaces) lets the init live on; EOF alone (the caller gave up,
// or the creator is killed at the deadline) ends the init with it.
[[noreturn]] void run_job_creator(const JobCreatorInputs &in, int cpu, int report_fd,
                                  int hold_fd) noexcept;

// In the job's init, once its job is gone from the node (job_init.hpp): back
// in the node's own view, it deletes the job as delete_job_namespace does,
// if it is still the job's recorded init. Its PID namespace holds nothing
// else, so there is nobody to kill. Defined with the rest of a job's
// deletion (job_namespace.cpp).
void end_job_from_its_init(const Config &config, std::uint32_t job, int node_mnt, int node_proc);

} // namespace sjail
