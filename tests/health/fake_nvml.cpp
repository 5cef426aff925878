// A fake libnvidia-ml.so.1 for the tests. It answers the NVML calls the quick
// check makes with values read from a real `nvidia-smi --query-gpu` capture
// (FAKE_NVML_CSV, e.g. ../shared/fixtures/nvidia-smi/02_h100_sxm_query-gpu_csv_idle.txt),
// repeated for FAKE_NVML_GPUS GPUs (default 8) with 18 NVLinks each (as in
// 04_h100_sxm_nvlink-s.txt). FAKE_NVML_FAULT injects one failure on GPU
// FAKE_NVML_FAULT_GPU (default 3):
//   lost, ecc, retired_pages, remap_pending, remap_failed, pcie_width,
//   pcie_gen, pcie_gen_idle, nvlink, hot, throttle, hang, init_fail, missing_gpu
#include "nvml_api.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace sjh::nvml;
constexpr unsigned kLinks = 18;

struct State {
    bool initialized = false;
    std::map<std::string, std::string> csv;
    unsigned gpus = 8;
    std::string fault;
    unsigned fault_gpu = 3;
};

State &state() {
    static State s;
    return s;
}

std::string trim(const std::string &s) {
    const auto a = s.find_first_not_of(' ');
    const auto b = s.find_last_not_of(" \r");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

std::vector<std::string> split_csv(const std::string &line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    std::string item;
    while (std::getline(ss, item, ',')) {
        out.push_back(trim(item));
    }
    return out;
}

bool load_csv(const char *path) {
    std::ifstream in(path);
    std::string line;
    std::vector<std::string> header;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') {
            continue; // the capture's banner
        }
        if (header.empty()) {
            header = split_csv(line);
            continue;
        }
        const auto values = split_csv(line);
        for (std::size_t i = 0; i < header.size() && i < values.size(); ++i) {
            state().csv[header[i]] = values[i];
        }
        return true;
    }
    return false;
}

const std::string &field(const char *key) {
    static const std::string none = "[N/A]";
    const auto it = state().csv.find(key);
    return it == state().csv.end() ? none : it->second;
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
    if (const char *g = std::getenv("FAKE_NVML_GPUS")) {
        state().gpus = static_cast<unsigned>(std::strtoul(g, nullptr, 10));
    }
    if (const char *g = std::getenv("FAKE_NVML_FAULT_GPU")) {
        state().fault_gpu = static_cast<unsigned>(std::strtoul(g, nullptr, 10));
    }
    const char *csv = std::getenv("FAKE_NVML_CSV");
    if (csv == nullptr || !load_csv(csv)) {
        return kErrorDriverNotLoaded;
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
    *count = state().fault == "missing_gpu" ? state().gpus - 1 : state().gpus;
    return kSuccess;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *device) {
    if (!state().initialized) {
        return kErrorUninitialized;
    }
    if (index >= state().gpus || index >= kMaxGpus) {
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

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci) {
    if (const auto rc = enter(d); rc != kSuccess) {
        return rc;
    }
    // The capture's bus id "00000000:00:09.0", with the bus number made unique per GPU.
    std::memset(pci, 0, sizeof *pci);
    pci->bus = 0x18 + index_of(d) * 0x10;
    const auto text = "00000000:" + std::string(1, "0123456789ABCDEF"[pci->bus >> 4]) +
                      std::string(1, "0123456789ABCDEF"[pci->bus & 0xF]) + ":00.0";
    std::strncpy(pci->busId, text.c_str(), sizeof pci->busId - 1);
    std::strncpy(pci->busIdLegacy, text.c_str() + 4, sizeof pci->busIdLegacy - 1);
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
    if (link >= kLinks) {
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
