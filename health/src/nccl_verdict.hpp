// SPDX-License-Identifier: Apache-2.0
// Pass/fail decision for one all_reduce_perf run (pure).
#pragma once

#include "nccl_output.hpp"
#include "nccl_thresholds.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjh {

struct NcclRun {
    int exit_code = 0;
    bool timed_out = false;
    int timeout_s = 0;
    int signal = 0; // killed by this signal (0: exited normally)
};

struct NcclVerdict {
    bool pass = false;
    std::string cause; // why it failed (empty on pass); goes into the drain reason
    std::optional<double> measured_busbw; // at the largest size
    std::optional<std::uint64_t> measured_size;
    std::vector<std::string> notes; // informative lines
};

// The meaning of all_reduce_perf's exit codes (nccl-tests 2.x).
std::string_view nccl_exit_meaning(int code);

// Fails on timeout, a non-zero exit, failure lines, no data rows, any #wrong,
// out-of-bounds FAILED, and busbw at the largest size under the threshold.
// gpus is the number of ranks (GPUs per node x nodes): with a single GPU busbw
// is 0 by definition, so bandwidth is not judged.
NcclVerdict judge_nccl(const NcclOutput &out, const NcclRun &run,
                       const std::optional<Threshold> &threshold, unsigned gpus);

} // namespace sjh
