// SPDX-License-Identifier: Apache-2.0
// The JSON that `dcgmi diag -r LEVEL -j` prints, read into one result per test
// and entity (pure). Both shapes DCGM has written are read: 4.x ("DCGM
// Diagnostic", entity_group/entity_id per result, a test_summary per test) and
// 3.x ("DCGM GPU Diagnostic", gpu_id per result). Samples and their sources:
// tests/health/fixtures/dcgm/README.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjh {

enum class DcgmStatus { pass, fail, warn, skip, not_run, unknown };

struct DcgmResult {
    std::string category; // "Deployment", "Hardware", ...
    std::string test;     // "software", "memory", "PCIe", ...
    // The GPU's DCGM id; absent for a result about the whole node or another
    // kind of entity (then `entity` names it, e.g. "CPU 0").
    std::optional<unsigned> gpu;
    std::string entity;
    DcgmStatus status = DcgmStatus::unknown;
    std::string status_text; // as DCGM wrote it
    std::string message;     // its warnings, joined with "; " (empty when none)
};

struct DcgmReport {
    std::string version;                      // DCGM's version, when the output says
    std::optional<std::string> runtime_error; // the diagnostic did not run
    std::vector<DcgmResult> results;
};

// "Pass", "FAIL", "Not Run", ... (any case); anything else is unknown.
DcgmStatus parse_dcgm_status(std::string_view text);
std::string_view
dcgm_status_name(DcgmStatus s); // "pass", "fail", "warn", "skip", "not_run", "unknown"

// Reads the first JSON object in `output` (dcgmi may print lines before it).
// Throws std::invalid_argument naming what is wrong when there is no such
// object or it is not a DCGM diagnostic document.
DcgmReport parse_dcgm_diag(std::string_view output);

} // namespace sjh
