// SPDX-License-Identifier: Apache-2.0
// The small part of the NVML C API the quick check uses, and the errors it
// can answer with, declared here so the build needs no NVIDIA headers (the
// tests' fake NVML implements the same declarations). Values match nvml.h.
#pragma once

extern "C" {
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlEnableState_t; // 0 disabled, 1 enabled

typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
}

namespace sjh::nvml {

inline constexpr nvmlReturn_t kSuccess = 0;
inline constexpr nvmlReturn_t kErrorUninitialized = 1;
inline constexpr nvmlReturn_t kErrorInvalidArgument = 2;
inline constexpr nvmlReturn_t kErrorNotSupported = 3;
inline constexpr nvmlReturn_t kErrorNotFound = 6;
inline constexpr nvmlReturn_t kErrorInsufficientSize = 7;
inline constexpr nvmlReturn_t kErrorDriverNotLoaded = 9;
inline constexpr nvmlReturn_t kErrorGpuIsLost = 15;
inline constexpr nvmlReturn_t kErrorResetRequired = 16;
inline constexpr int kMemoryErrorUncorrected = 1;
inline constexpr int kVolatileEcc = 0;
inline constexpr int kTemperatureGpu = 0;
inline constexpr int kTemperatureThresholdSlowdown = 1;
inline constexpr unsigned kNvlinkMaxLinks = 18;

} // namespace sjh::nvml
