// SPDX-License-Identifier: Apache-2.0
// A fake libnvidia-ml.so.1 for the tests. It answers the NVML calls the quick
// check makes with values read from a real nvidia-smi capture (see
// fake_nvml_capture.hpp):
//   FAKE_NVML_QUERY  an `nvidia-smi -q` capture, e.g. 07_h200_nvidia-smi-q_idle.txt:
//                    the node as recorded (one H200, no NVLink);
//   FAKE_NVML_CSV    otherwise, a `--query-gpu` CSV capture, e.g.
//                    02_h100_sxm_query-gpu_csv_idle.txt: an 8x H100 board.
// FAKE_NVML_GPUS overrides the GPU count. Every GPU has the capture's serial
// number with its index appended; FAKE_NVML_REPLACED_GPU=N gives GPU N another
// one (a replaced board). FAKE_NVML_FAULT injects one failure
// on GPU FAKE_NVML_FAULT_GPU (default 3):
//   lost, ecc, retired_pages, remap_pending, remap_failed, pcie_width,
//   pcie_gen, pcie_gen_idle, nvlink, hot, throttle, hang, init_fail, missing_gpu
#include "fake_nvml_capture.hpp"
#include "nvml_api.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {

using namespace sjh::nvml;

struct State {
    bool initialized = false;
    fake_nvml::Capture capture;
    std::string fault;
    unsigned fault_gpu = 3;
};

State &state() {
    static State s;
    return s;
}

bool load_capture() {
    const char *query = std::getenv("FAKE_NVML_QUERY");
    const char *csv = std::getenv("FAKE_NVML_CSV");
    auto c = query != nullptr ? fake_nvml::load_nvidia_smi_q(query)
             : csv != nullptr ? fake_nvml::load_query_gpu_csv(csv)
                              : std::nullopt;
    if (!c) {
        return false;
    }
    state().capture = *c;
    return true;
}

const std::string &field(const char *key) {
    static const std::string none = "[N/A]";
    const auto &fields = state().capture.fields;
    const auto it = fields.find(key);
    return it == fields.end() ? none : it->second;
}

bool na(const char *key) {
    return field(key).front() == '[';
}

unsigned number(const char *key) {
    return static_cast<unsigned>(std::strtoul(field(key).c_str(), nullptr, 0));
}

// Handles point into this array; a handle's offset is the GPU index.
constexpr unsigned kMaxGpus = 64;
char *device_slots() {
    static char slots[kMaxGpus];
    return slots;
}

unsigned index_of(nvmlDevice_t d) {
    return static_cast<unsigned>(reinterpret_cast<char *>(d) - device_slots());
}

bool faulty(nvmlDevice_t d, const char *fault) {
    return state().fault == fault && index_of(d) == state().fault_gpu;
}

// Every device call first checks init and the "lost" and "hang" faults.
nvmlReturn_t enter(nvmlDevice_t d) {
    if (!state().initialized) {
        return kErrorUninitialized;
    }
    if (faulty(d, "lost")) {
        return kErrorGpuIsLost;
    }
    return kSuccess;
}

} // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2() {
    const char *fault = std::getenv("FAKE_NVML_FAULT");
    state().fault = fault != nullptr ? fault : "";
    if (state().fault == "init_fail") {
        return kErrorDriverNotLoaded;
    }
    if (!load_capture()) {
        return kErrorDriverNotLoaded;
    }
    if (const char *g = std::getenv("FAKE_NVML_GPUS")) {
        state().capture.gpus = static_cast<unsigned>(std::strtoul(g, nullptr, 10));
    }
    if (const char *g = std::getenv("FAKE_NVML_FAULT_GPU")) {
        state().fault_gpu = static_cast<unsigned>(std::strtoul(g, nullptr, 10));
    }
    state().initialized = true;
    return kSuccess;
}

nvmlReturn_t nvmlShutdown() {
    state().initialized = false;
    return kSuccess;
}

const char *nvmlErrorString(nvmlReturn_t rc) {
    switch (rc) {
    case kSuccess:
        return "Success";
    case kErrorUninitialized:
        return "Uninitialized";
    case kErrorInvalidArgument:
        return "Invalid Argument";
    case kErrorNotSupported:
        return "Not Supported";
    case kErrorDriverNotLoaded:
        return "Driver Not Loaded";
    case kErrorGpuIsLost:
        return "GPU is lost";
    default:
        return "Unknown Error";
    }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count) {
    if (!state().initialized) {
        return kErrorUninitialized;
    }
    *count = state().fault == "missing_gpu" ? state().capture.gpus - 1 : state().capture.gpus;
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *device) {
    if (!state().initialized) {
        return kErrorUninitialized;
    }
    if (index >= state().capture.gpus || index >= kMaxGpus) {
        return kErrorInvalidArgument;
    }
    *device = reinterpret_cast<nvmlDevice_t>(device_slots() + index);
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned length) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    const auto &n = field("name");
    if (n.size() + 1 > length) {
        return kErrorInsufficientSize;
    }
    std::memcpy(name, n.c_str(), n.size() + 1);
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char *serial, unsigned length) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    if (na("serial")) {
        return kErrorNotSupported;
    }
    const auto index = index_of(d);
    const char *replaced = std::getenv("FAKE_NVML_REPLACED_GPU");
    const bool swapped = replaced != nullptr && std::to_string(index) == replaced;
    const auto s = field("serial") + (swapped ? "-replaced" : "") + std::to_string(index);
    if (s.size() + 1 > length) {
        return kErrorInsufficientSize;
    }
    std::memcpy(serial, s.c_str(), s.size() + 1);
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    // One bus per GPU, from the capture's (see fake_nvml_capture.hpp).
    std::memset(pci, 0, sizeof *pci);
    pci->bus = state().capture.bus + index_of(d) * 0x10;
    pci->device = state().capture.device;
    std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:%02X.0", pci->bus, pci->device);
    std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:%02X.0", pci->bus,
                  pci->device);
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int, int, unsigned long long *count) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    if (faulty(d, "hang")) {
        for (;;) {
            ::pause(); // a sick GPU: the call never returns
        }
    }
    *count = faulty(d, "ecc") ? 2 : number("ecc.errors.uncorrected.volatile.total");
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, nvmlEnableState_t *pending) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    if (faulty(d, "retired_pages")) {
        *pending = 1;
        return kSuccess;
    }
    if (na("retired_pages.pending")) {
        return kErrorNotSupported; // H100 uses row remapping instead
    }
    *pending = field("retired_pages.pending") == "Yes" ? 1 : 0;
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *corr, unsigned *unc,
                                       unsigned *pending, unsigned *failed) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    *corr = number("remapped_rows.correctable");
    *unc = number("remapped_rows.uncorrectable");
    *pending = faulty(d, "remap_pending") || field("remapped_rows.pending") == "Yes" ? 1 : 0;
    *failed = faulty(d, "remap_failed") || field("remapped_rows.failure") == "Yes" ? 1 : 0;
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned *v) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    const bool slow = faulty(d, "pcie_gen") || faulty(d, "pcie_gen_idle");
    *v = slow ? 3 : number("pcie.link.gen.gpucurrent");
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned *v) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    *v = number("pcie.link.gen.max");
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned *v) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    *v = faulty(d, "pcie_width") ? 8 : number("pcie.link.width.current");
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned *v) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    *v = number("pcie.link.width.max");
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, nvmlEnableState_t *active) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    if (state().capture.nvlinks == 0) {
        return kErrorNotSupported;
    }
    if (link >= state().capture.nvlinks) {
        return kErrorInvalidArgument;
    }
    *active = faulty(d, "nvlink") && link == 5 ? 0 : 1;
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int, unsigned *t) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    *t = faulty(d, "hot") ? 92 : number("temperature.gpu");
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, int, unsigned *) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    return kErrorNotSupported; // the capture only has a relative T.Limit
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    *r = std::strtoull(field("clocks_event_reasons.active").c_str(), nullptr, 16);
    if (faulty(d, "hot")) {
        *r |= 0x40; // HW thermal slowdown
    }
    if (faulty(d, "throttle")) {
        *r |= 0x20; // SW thermal slowdown
    }
    if (faulty(d, "pcie_gen")) {
        *r &= ~1ULL; // busy, so a slow link is not power saving
    }
    if (faulty(d, "pcie_gen_idle")) {
        *r |= 1ULL;
    }
    return kSuccess;
}

} // extern "C"
