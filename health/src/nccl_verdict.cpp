// SPDX-License-Identifier: Apache-2.0
#include "nccl_verdict.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <stdexcept>

namespace sjh {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

[[noreturn]] void bad_threshold(std::string_view spec, std::string_view why) {
    throw std::invalid_argument(fmt::format(
        "bad threshold '{}': {} (write MODELxGPUS=GBPS, for example H100x8=400)", spec, why));
}

} // namespace

std::string Threshold::spec() const {
    return fmt::format("{}x{}={:g}", model, gpus, min_busbw);
}

Threshold parse_threshold(std::string_view spec) {
    const auto eq = spec.find('=');
    if (eq == std::string_view::npos) {
        bad_threshold(spec, "no '='");
    }
    const auto key = spec.substr(0, eq);
    const auto value = spec.substr(eq + 1);
    const auto x = key.rfind('x');
    if (x == std::string_view::npos || x == 0 || x + 1 == key.size()) {
        bad_threshold(spec, "the key must be MODELxGPUS");
    }
    Threshold t;
    t.model = std::string(key.substr(0, x));
    const auto count = key.substr(x + 1);
    const auto [p1, e1] = std::from_chars(count.data(), count.data() + count.size(), t.gpus);
    if (e1 != std::errc{} || p1 != count.data() + count.size() || t.gpus == 0) {
        bad_threshold(spec, fmt::format("GPU count '{}' is not a positive integer", count));
    }
    const auto [p2, e2] = std::from_chars(value.data(), value.data() + value.size(), t.min_busbw);
    if (e2 != std::errc{} || p2 != value.data() + value.size() || !(t.min_busbw > 0)) {
        bad_threshold(spec, fmt::format("bandwidth '{}' is not a positive number of GB/s", value));
    }
    return t;
}

std::vector<Threshold> default_thresholds() {
    return {
        {"H100", 8, 400}, {"H200", 8, 400}, {"A100", 8, 200}, {"A100", 4, 200}, {"A40", 2, 40},
    };
}

std::vector<Threshold> merge_thresholds(std::vector<Threshold> base,
                                        const std::vector<Threshold> &overrides) {
    for (const auto &o : overrides) {
        const auto same = [&o](const Threshold &t) {
            return lower(t.model) == lower(o.model) && t.gpus == o.gpus;
        };
        base.erase(std::remove_if(base.begin(), base.end(), same), base.end());
        base.push_back(o);
    }
    return base;
}

std::optional<Threshold> find_threshold(const std::vector<Threshold> &table,
                                        std::string_view gpu_name, unsigned gpus) {
    const auto name = lower(gpu_name);
    std::optional<Threshold> best;
    for (const auto &t : table) {
        if (t.gpus != gpus || name.find(lower(t.model)) == std::string::npos) {
            continue;
        }
        if (!best || t.model.size() > best->model.size()) {
            best = t;
        }
    }
    return best;
}

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
        return fail(fmt::format("busbw {:.2f} GB/s at {} < {:g} GB/s expected for {}x{}",
                                *v.measured_busbw, size, threshold->min_busbw, threshold->model,
                                threshold->gpus));
    } else {
        v.notes.push_back(fmt::format("busbw {:.2f} GB/s at {} >= {:g} GB/s expected for {}x{}",
                                      *v.measured_busbw, size, threshold->min_busbw,
                                      threshold->model, threshold->gpus));
    }
    v.pass = true;
    return v;
}

} // namespace sjh
