// SPDX-License-Identifier: Apache-2.0
/* A stand-in for nccl-tests' all_reduce_perf for clusters without GPUs (the
 * local cluster's --fake-gpu mode): like the real one, whose CUDA runtime
 * opens the driver by its soname alone, it finds libcuda.so.1 and
 * libnvidia-ml.so.1 through the loader (no path, no LD_LIBRARY_PATH), so it
 * only passes on a node whose driver the jail really shows. It then prints
 * an all_reduce_perf report of one GPU at 8 GiB (bus bandwidth 0 by
 * definition) naming the driver and the files it loaded. Without a driver
 * it fails as the real one does: a "CUDA failure" line, exit status 2. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static const char *path_of(void *lib) {
    struct link_map *map = NULL;
    return dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map != NULL ? map->l_name : "?";
}

static void *symbol(void *lib, const char *name) {
    return lib == NULL ? NULL : dlsym(lib, name);
}

static int cuda_failure(const char *why) {
    printf("fake-node: Test CUDA failure common.cu:1127 '%s'\n", why);
    return 2;
}

static int driver_version(void *cuda, void *nvml, int *cuda_version, char *version, size_t size) {
    int (*get_cuda)(int *) = NULL;
    int (*init)(void) = NULL;
    int (*get_version)(char *, unsigned int) = NULL;
    void *sym = symbol(cuda, "cuDriverGetVersion");
    memcpy(&get_cuda, &sym, sizeof(sym));
    sym = symbol(nvml, "nvmlInit_v2");
    memcpy(&init, &sym, sizeof(sym));
    sym = symbol(nvml, "nvmlSystemGetDriverVersion");
    memcpy(&get_version, &sym, sizeof(sym));
    if (get_cuda == NULL || init == NULL || get_version == NULL) {
        return -1;
    }
    if (get_cuda(cuda_version) != 0 || init() != 0 || get_version(version, (unsigned)size) != 0) {
        return -1;
    }
    return 0;
}

int main(void) {
    printf("# nccl-tests version 2.19.6 (slurm-jail fake, no GPU) nccl-headers=22809 "
           "nccl-library=22809\n# Collective test starting: all_reduce_perf\n");
    fflush(stdout);
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (cuda == NULL) {
        return cuda_failure("CUDA driver version is insufficient for CUDA runtime version");
    }
    void *nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    int cuda_version = 0;
    char version[96] = "";
    if (nvml == NULL || driver_version(cuda, nvml, &cuda_version, version, sizeof(version)) != 0) {
        return cuda_failure("unknown error");
    }
    printf("# nThread 1 nGpus 1 minBytes 8589934592 maxBytes 8589934592 step: 2(factor) warmup "
           "iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n#\n"
           "# Driver %s (CUDA %d): libcuda.so.1=%s libnvidia-ml.so.1=%s\n"
           "# Using devices\n"
           "#  Rank  0 Group  0 Pid      1 on  fake-node device  0 [0000:00:06] NVIDIA H200\n#\n",
           version, cuda_version, path_of(cuda), path_of(nvml));
    printf("#                                                              out-of-place          "
           "             in-place          \n"
           "#       size         count      type   redop    root     time   algbw   busbw  "
           "#wrong     time   algbw   busbw  #wrong \n"
           "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
           "      (us)  (GB/s)  (GB/s)         \n"
           "  8589934592    2147483648     float     sum      -1  3998.12  2148.5    0.00       "
           "0     1.10   8e+06    0.00       0\n"
           "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0 \n#\n"
           "# Collective test concluded: all_reduce_perf\n#\n");
    return 0;
}
