// SPDX-License-Identifier: Apache-2.0
// Pass/fail decision for one all_reduce_perf run (pure).
#pragma once

#include "nccl_output.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjh {

// Minimum bus bandwidth (GB/s) at the largest message size for a GPU model
// and count, written "H100x8=400".
struct Threshold {
    std::string model; // matched case-insensitively as a substring of the GPU name
    unsigned gpus = 0;
    double min_busbw = 0;
    std::string spec() const;
};

// Parses "MODELxN=GBPS". Throws std::invalid_argument naming the problem.
Threshold parse_threshold(std::string_view spec);

// The built-in table (see health/README.md for where the numbers come from).
std::vector<Threshold> default_thresholds();

// Later entries with the same model and count replace earlier ones.
std::vector<Threshold> merge_thresholds(std::vector<Threshold> base,
                                        const std::vector<Threshold> &overrides);

// The entry for this GPU name and count; the longest matching model wins
// ("A100-SXM4-80GB" beats "A100").
std::optional<Threshold> find_threshold(const std::vector<Threshold> &table,
                                        std::string_view gpu_name, unsigned gpus);

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
// With a single GPU busbw is 0 by definition, so bandwidth is not judged.
NcclVerdict judge_nccl(const NcclOutput &out, const NcclRun &run,
                       const std::optional<Threshold> &threshold, unsigned gpus);

} // namespace sjh
