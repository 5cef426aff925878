// SPDX-License-Identifier: Apache-2.0
/* A fake libcuda.so.<version> for the tests: the few CUDA driver API calls a
 * normally linked program makes to learn which driver it runs on. Built once
 * per fake driver version, with FAKE_CUDA_VERSION (what cuDriverGetVersion
 * reports, e.g. 12040 for CUDA 12.4) set by CMake. */
#include <stddef.h>

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3

typedef int CUresult;

static int initialized;

__attribute__((visibility("default"))) CUresult cuInit(unsigned int flags) {
    if (flags != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    initialized = 1;
    return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult cuDriverGetVersion(int *version) {
    if (version == NULL) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *version = FAKE_CUDA_VERSION;
    return CUDA_SUCCESS;
}

/* A fake driver has no GPUs. */
__attribute__((visibility("default"))) CUresult cuDeviceGetCount(int *count) {
    if (count == NULL) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!initialized) {
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    *count = 0;
    return CUDA_SUCCESS;
}
