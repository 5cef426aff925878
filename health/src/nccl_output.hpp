// SPDX-License-Identifier: Apache-2.0
// Parser for the text nccl-tests' all_reduce_perf prints (pure, no I/O).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjh {

// One data row: the same message size measured out-of-place and in-place.
struct NcclRow {
    std::uint64_t size_bytes = 0;
    std::uint64_t count = 0;
    std::string type;
    std::string redop;
    double oop_time_us = 0;
    double oop_algbw = 0;
    double oop_busbw = 0;
    std::optional<double> oop_wrong; // nullopt when printed as N/A
    double ip_time_us = 0;
    double ip_algbw = 0;
    double ip_busbw = 0;
    std::optional<double> ip_wrong;
};

struct NcclOutput {
    std::vector<NcclRow> rows;
    std::optional<std::uint64_t> out_of_bounds; // "# Out of bounds values : N OK"
    std::optional<bool> out_of_bounds_ok;       // OK -> true, FAILED -> false
    std::optional<double> avg_busbw;            // "# Avg bus bandwidth : X" (informative only)
    std::optional<std::string> version;         // "# nccl-tests version 2.18.0 ..."
    std::vector<std::string> failures;          // "Test NCCL failure ..." / "CUDA failure" lines
};

// Parses the combined stdout/stderr of all_reduce_perf. Copes with mpirun
// --tag-output prefixes, interleaved stderr noise, "#wrong" as N/A or in %g
// exponent form, a missing footer, and outputs with no data rows at all.
NcclOutput parse_nccl_output(std::string_view text);

// Removes a leading "[1,0]<stdout>:" tag. Returns the rest and the stream name
// ("stdout", "stderr", or "" when the line had no tag).
std::pair<std::string_view, std::string_view> strip_mpirun_tag(std::string_view line);

// Rows at the largest message size (usually one).
std::vector<NcclRow> largest_size_rows(const NcclOutput &out);

// Bus bandwidth at the largest message size: the better of out-of-place and
// in-place, so a one-off dip in one of the two does not drain a healthy node.
std::optional<double> busbw_at_largest_size(const NcclOutput &out);

// Sum of every #wrong value that was printed as a number.
double total_wrong(const NcclOutput &out);

// "8 GiB", "512 MiB", "8 B".
std::string human_size(std::uint64_t bytes);

} // namespace sjh
