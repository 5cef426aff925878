// SPDX-License-Identifier: Apache-2.0
// Reads every GPU through NVML in a child process, so a hung NVML call (which
// happens on sick GPUs) cannot hang the check: the parent gives up at the
// deadline, kills the child and reports which call hung.
#pragma once

#include "gpu_snapshot.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace sjh {

inline constexpr const char *kDefaultNvmlLibrary = "libnvidia-ml.so.1";

struct ProbeResult {
    std::optional<NodeSnapshot> snapshot;
    std::string failure; // set when snapshot is empty
};

ProbeResult probe_gpus(const std::string &library, std::chrono::milliseconds budget);

} // namespace sjh
