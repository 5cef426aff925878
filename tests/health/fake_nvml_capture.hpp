// SPDX-License-Identifier: Apache-2.0
// What the fake NVML presents, read from a real nvidia-smi capture: either the
// `nvidia-smi --query-gpu=... --format=csv` form, whose field names it keeps,
// or the `nvidia-smi -q` form, translated to the same field names.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace fake_nvml {

struct Capture {
    std::map<std::string, std::string> fields; // "name", "temperature.gpu", ...; "[N/A]" if none
    unsigned gpus = 0;                         // GPUs the node presents
    unsigned nvlinks = 0;                      // NVLinks per GPU (0: the GPU has none)
    unsigned bus = 0;                          // PCI bus of GPU 0; GPU i sits 0x10 * i above
    unsigned device = 0;                       // PCI device number
};

// The CSV capture of one H100 (02_h100_sxm_query-gpu_csv_idle.txt) presented
// as an 8-GPU HGX board: 18 NVLinks each (04_h100_sxm_nvlink-s.txt), buses
// from 0x18 up.
std::optional<Capture> load_query_gpu_csv(const std::string &path);

// An `nvidia-smi -q` capture (07_h200_nvidia-smi-q_idle.txt) presented as
// recorded: its attached GPUs and its PCI bus id, without NVLinks (the -q form
// lists no NVLink state, and that VM exposes none).
std::optional<Capture> load_nvidia_smi_q(const std::string &path);

} // namespace fake_nvml
