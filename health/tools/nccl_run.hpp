// SPDX-License-Identifier: Apache-2.0
// What the one-node and the multi-node NCCL checks share: where
// all_reduce_perf is, its command line, how its run ended, the GPU model and
// count, and the bandwidth threshold for a run.
#pragma once

#include "nccl_thresholds.hpp"
#include "nccl_verdict.hpp"
#include "subprocess.hpp"

#include <string>
#include <vector>

namespace sjh {

// Where images/nccl-tests installs it in the jail (docs/contract.md).
inline constexpr const char *kDefaultAllReducePerf =
    "/usr/lib/slurm-jail/nccl-tests/bin/all_reduce_perf";

// The binary as a trusted absolute path (never looked up in $PATH).
std::string find_all_reduce_perf(const std::string &binary);

// binary + args split on spaces, {gpus} replaced by `gpus`.
std::vector<std::string> build_argv(const std::string &binary, const std::string &args,
                                    unsigned gpus);

// How the run ended, for judge_nccl (`timeout_s`: its time limit). One that
// could not start counts as exit code 1.
NcclRun nccl_run_of(const CommandResult &c, int timeout_s);

// Fills an empty model or a zero count from NVML; throws naming the options.
void resolve_gpus(std::string &gpu_model, unsigned &gpus, const std::string &nvml_library);

// The built-in table with the --threshold specs over it.
std::vector<Threshold> threshold_table(const std::vector<std::string> &specs);

// The threshold for that many nodes; throws, naming the --threshold to add
// (and the config `section` it may go in), when there is none.
Threshold required_threshold(const std::vector<Threshold> &table, const std::string &gpu_model,
                             unsigned gpus, unsigned nodes, const std::string &section);

} // namespace sjh
