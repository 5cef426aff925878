// SPDX-License-Identifier: Apache-2.0
#include "nccl_verdict.hpp"

#include <fmt/format.h>
#include <utility>

namespace sjh {

std::string_view nccl_exit_meaning(int code) {
    switch (code) {
    case 0:
        return "success";
    case 1:
        return "internal error";
    case 2:
        return "CUDA error";
    case 3:
        return "NCCL error";
    case 4:
        return "timeout";
    case 5:
        return "not implemented";
    case 6:
        return "usage error";
    case 7:
        return "wrong results or bandwidth under NCCL_TESTS_MIN_BW";
    default:
        return "unknown exit code";
    }
}

NcclVerdict judge_nccl(const NcclOutput &out, const NcclRun &run,
                       const std::optional<Threshold> &threshold, unsigned gpus) {
    NcclVerdict v;
    v.measured_busbw = busbw_at_largest_size(out);
    if (!out.rows.empty()) {
        v.measured_size = largest_size_rows(out).front().size_bytes;
    }
    const auto fail = [&v](std::string cause) {
        v.pass = false;
        v.cause = std::move(cause);
        return v;
    };
    if (run.timed_out) {
        return fail(fmt::format("all_reduce_perf did not finish within {} s", run.timeout_s));
    }
    if (run.signal != 0) {
        return fail(fmt::format("all_reduce_perf was killed by signal {}", run.signal));
    }
    if (run.exit_code != 0) {
        std::string detail = out.failures.empty() ? "" : ": " + out.failures.front();
        return fail(fmt::format("all_reduce_perf exited with code {} ({}){}", run.exit_code,
                                nccl_exit_meaning(run.exit_code), detail));
    }
    if (!out.failures.empty()) {
        return fail(fmt::format("all_reduce_perf reported: {}", out.failures.front()));
    }
    if (out.rows.empty()) {
        return fail("all_reduce_perf printed no data rows");
    }
    if (const double wrong = total_wrong(out); wrong > 0) {
        return fail(fmt::format("all_reduce_perf found {:g} wrong values (#wrong)", wrong));
    }
    if (out.out_of_bounds_ok == false) {
        return fail(fmt::format("all_reduce_perf: out of bounds values {} FAILED",
                                out.out_of_bounds.value_or(0)));
    }
    if (!out.out_of_bounds_ok) {
        v.notes.emplace_back("no 'Out of bounds values' footer in the output");
    }
    const auto size = human_size(*v.measured_size);
    if (gpus <= 1) {
        v.notes.emplace_back("one GPU: bus bandwidth is 0 by definition and is not judged");
    } else if (!threshold) {
        return fail(fmt::format("no bandwidth threshold for {} GPUs", gpus));
    } else if (*v.measured_busbw < threshold->min_busbw) {
        return fail(fmt::format("busbw {:.2f} GB/s at {} < {:g} GB/s expected for {}",
                                *v.measured_busbw, size, threshold->min_busbw, threshold->key()));
    } else {
        v.notes.push_back(fmt::format("busbw {:.2f} GB/s at {} >= {:g} GB/s expected for {}",
                                      *v.measured_busbw, size, threshold->min_busbw,
                                      threshold->key()));
    }
    v.pass = true;
    return v;
}

} // namespace sjh
