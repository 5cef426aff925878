// SPDX-License-Identifier: Apache-2.0
/* What a framework does to find the driver (PyTorch, JAX, CuPy): dlopen the
 * sonames with no path. Prints what each library reports and which file the
 * loader opened; exits 1 when either cannot be loaded. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static const char *path_of(void *lib) {
    struct link_map *map = NULL;
    return dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map != NULL ? map->l_name : "?";
}

static void *load(const char *soname) {
    void *lib = dlopen(soname, RTLD_NOW);
    if (lib == NULL) {
        printf("%s: %s\n", soname, dlerror());
    }
    return lib;
}

int main(void) {
    void *cuda = load("libcuda.so.1");
    void *nvml = load("libnvidia-ml.so.1");
    if (cuda == NULL || nvml == NULL) {
        return 1;
    }
    int (*driver_version)(int *) = NULL;
    int (*nvml_init)(void) = NULL;
    int (*nvml_version)(char *, unsigned int) = NULL;
    void *sym = dlsym(cuda, "cuDriverGetVersion");
    memcpy(&driver_version, &sym, sizeof(sym));
    sym = dlsym(nvml, "nvmlInit_v2");
    memcpy(&nvml_init, &sym, sizeof(sym));
    sym = dlsym(nvml, "nvmlSystemGetDriverVersion");
    memcpy(&nvml_version, &sym, sizeof(sym));
    if (driver_version == NULL || nvml_init == NULL || nvml_version == NULL) {
        printf("missing symbols\n");
        return 1;
    }
    int cuda_version = 0;
    char version[96] = "";
    if (driver_version(&cuda_version) != 0 || nvml_init() != 0 ||
        nvml_version(version, sizeof(version)) != 0) {
        printf("driver calls failed\n");
        return 1;
    }
    printf("libcuda.so.1=%s cuda=%d\nlibnvidia-ml.so.1=%s driver=%s\n", path_of(cuda), cuda_version,
           path_of(nvml), version);
    return 0;
}
