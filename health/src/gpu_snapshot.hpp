// SPDX-License-Identifier: Apache-2.0
// What the NVML probe read from each GPU. Optional fields are absent when the
// GPU does not support the query (NVML_ERROR_NOT_SUPPORTED).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sjh {

struct GpuSnapshot {
    unsigned index = 0;
    std::string name;
    std::string bus_id; // NVML form, "00000000:1B:00.0"
    std::string serial; // the board's serial number (empty: NVML has none)
    std::string lost;   // non-empty: the GPU is lost / off the bus / needs reset, and why
    std::optional<std::uint64_t> ecc_uncorrected_volatile;
    std::optional<bool> retired_pages_pending;
    std::optional<bool> remap_pending;
    std::optional<bool> remap_failed;
    std::optional<unsigned> pcie_gen;
    std::optional<unsigned> pcie_gen_max;
    std::optional<unsigned> pcie_width;
    std::optional<unsigned> pcie_width_max;
    std::optional<unsigned> nvlinks_total; // absent: no NVLink on this GPU
    std::vector<unsigned> nvlinks_inactive;
    std::optional<unsigned> temperature_c;
    std::optional<unsigned> slowdown_temp_c;
    std::optional<std::uint64_t> throttle_reasons; // nvmlClocksThrottleReasons bitmask
    std::vector<std::string> errors;               // unexpected NVML errors, "nvmlX: text (code)"
};

struct NodeSnapshot {
    unsigned count = 0; // what nvmlDeviceGetCount said
    std::vector<GpuSnapshot> gpus;
};

void to_json(nlohmann::json &j, const GpuSnapshot &g);
void from_json(const nlohmann::json &j, GpuSnapshot &g);
void to_json(nlohmann::json &j, const NodeSnapshot &n);
void from_json(const nlohmann::json &j, NodeSnapshot &n);

} // namespace sjh
