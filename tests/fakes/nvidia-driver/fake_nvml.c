// SPDX-License-Identifier: Apache-2.0
/* A fake libnvidia-ml.so.<version> for the tests of the driver binding: it
 * reports FAKE_DRIVER_VERSION (set by CMake) and no GPUs. The health checks
 * have their own, richer fake in tests/health. */
#include <stddef.h>
#include <string.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_INSUFFICIENT_SIZE 7

typedef int nvmlReturn_t;

static int initialized;

__attribute__((visibility("default"))) nvmlReturn_t nvmlInit_v2(void) {
    initialized = 1;
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlShutdown(void) {
    if (!initialized) {
        return NVML_ERROR_UNINITIALIZED;
    }
    initialized = 0;
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t
nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (!initialized) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (version == NULL) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (length < sizeof(FAKE_DRIVER_VERSION)) {
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    memcpy(version, FAKE_DRIVER_VERSION, sizeof(FAKE_DRIVER_VERSION));
    return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialized) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (count == NULL) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *count = 0;
    return NVML_SUCCESS;
}
