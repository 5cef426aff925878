// SPDX-License-Identifier: Apache-2.0
// The quick check's verdict over one NVML snapshot and the recent Xids (pure).
#pragma once

#include "gpu_snapshot.hpp"
#include "xid.hpp"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sjh {

enum class Severity { warn, drain };

struct Problem {
    std::string check;           // "ecc_uncorrected", ...
    std::optional<unsigned> gpu; // absent for node-level checks
    Severity severity = Severity::drain;
    std::string message; // one human line
};

// One gauge per check per GPU (gpu absent for node-level checks).
struct CheckStatus {
    std::string check;
    std::optional<unsigned> gpu;
    bool ok = true;
};

struct GpuCheckConfig {
    unsigned expected_gpus = 0;
    unsigned temp_warn_c = 85; // warn at or above (also at the GPU's own slowdown temperature)
};

struct Evaluation {
    std::vector<Problem> problems;
    std::vector<CheckStatus> statuses;
    bool must_drain() const;
    // The drain cause: the first drain-worthy problem, plus "(+N more)".
    std::string cause() const;
};

// Throttle reasons that mean the GPU is slowed down by heat or power trouble.
inline constexpr std::uint64_t kThrottleIdle = 0x1;
inline constexpr std::uint64_t kThrottleHwSlowdown = 0x8;
inline constexpr std::uint64_t kThrottleSwThermal = 0x20;
inline constexpr std::uint64_t kThrottleHwThermal = 0x40;
inline constexpr std::uint64_t kThrottleHwPowerBrake = 0x80;

// The probe could not produce a snapshot (hung, crashed, NVML init failed).
Evaluation evaluate_probe_failure(const std::string &message);

Evaluation evaluate(const NodeSnapshot &node, const std::vector<XidEvent> &fatal_xids,
                    const GpuCheckConfig &cfg);

// "8" from "gpu:8", "gpu:h100:8", "gpu:h100:8(S:0-1),nic:2"; nullopt if no gpu.
std::optional<unsigned> gpu_count_from_gres(std::string_view gres);

} // namespace sjh
