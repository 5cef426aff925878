// SPDX-License-Identifier: Apache-2.0
// The quick check's verdict over one `dcgmi diag` run, and how it is reported
// (pure): a failed test drains, a warning warns, a skipped test or one that
// did not run is neither. A run that gave no verdict (dcgmi missing, killed at
// the deadline, nv-hostengine unreachable, output unreadable) warns, or drains
// when the admin made DCGM required.
#pragma once

#include "dcgm_diag.hpp"
#include "gpu_checks.hpp"
#include "report.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sjh {

struct DcgmPolicy {
    unsigned level = 1;    // dcgmi diag -r LEVEL
    bool required = false; // a run without a verdict drains
    double timeout_s = 0;  // what dcgmi was given, for the message
};

// What running dcgmi gave (filled by the system layer, dcgm_run.hpp).
struct DcgmRun {
    bool found = false;     // a trusted dcgmi exists
    std::string not_found;  // why not, when !found
    bool started = false;   // exec succeeded
    std::string exec_error; // why not, when found && !started
    int exit_code = -1;
    int signal = 0;
    bool timed_out = false;
    std::string output; // stdout and stderr
};

struct DcgmOutcome {
    // "ok" (results read), "missing", "exec_failed", "timeout", "killed",
    // "no_hostengine", "runtime_error" or "unreadable".
    std::string outcome;
    std::string version;
    std::vector<DcgmResult> results;
};

// Adds the problems to `ev` and one node-level "dcgm" status (ok when DCGM
// added no problem).
DcgmOutcome judge_dcgm(const DcgmRun &run, const DcgmPolicy &policy, Evaluation &ev);

// Prometheus: slurm_jail_gpu_check_dcgm_result{node,test,gpu} (1 pass, 0
// fail, 2 warn, 3 skip or not run, 4 unrecognised status),
// slurm_jail_gpu_check_dcgm_level{node} and
// slurm_jail_gpu_check_dcgm_outcome{node,outcome} 1.
std::string render_dcgm_metrics(const DcgmOutcome &o, const DcgmPolicy &policy,
                                const RunInfo &info);

// For --json: level, outcome, version and the results.
nlohmann::json render_dcgm_json(const DcgmOutcome &o, const DcgmPolicy &policy);

} // namespace sjh
