// SPDX-License-Identifier: Apache-2.0
/* A fake nvidia-smi: like the real one, it finds NVML by its soname alone
 * (dlopen("libnvidia-ml.so.1"), no path, no LD_LIBRARY_PATH), so its output
 * proves which copy the loader found. Prints the driver version NVML reports
 * and the file it was loaded from; exits 9, as the real tool does, when it
 * cannot reach NVML. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

typedef int (*init_fn)(void);
typedef int (*version_fn)(char *, unsigned int);
typedef int (*count_fn)(unsigned int *);

static void *symbol(void *lib, const char *name) {
    void *sym = dlsym(lib, name);
    if (sym == NULL) {
        fprintf(stderr, "nvidia-smi: %s: %s\n", name, dlerror());
    }
    return sym;
}

int main(void) {
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (lib == NULL) {
        fprintf(stderr,
                "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver: "
                "%s\n",
                dlerror());
        return 9;
    }
    void *init_sym = symbol(lib, "nvmlInit_v2");
    void *version_sym = symbol(lib, "nvmlSystemGetDriverVersion");
    void *count_sym = symbol(lib, "nvmlDeviceGetCount_v2");
    if (init_sym == NULL || version_sym == NULL || count_sym == NULL) {
        return 9;
    }
    init_fn init;
    version_fn get_version;
    count_fn get_count;
    memcpy(&init, &init_sym, sizeof(init));
    memcpy(&get_version, &version_sym, sizeof(get_version));
    memcpy(&get_count, &count_sym, sizeof(get_count));
    char version[96] = "";
    unsigned int count = 0;
    if (init() != 0 || get_version(version, sizeof(version)) != 0 || get_count(&count) != 0) {
        fprintf(stderr, "nvidia-smi: NVML calls failed\n");
        return 9;
    }
    struct link_map *map = NULL;
    if (dlinfo(lib, RTLD_DI_LINKMAP, &map) != 0 || map == NULL) {
        return 9;
    }
    printf("Driver Version: %s\nGPUs: %u\nNVML: %s\n", version, count, map->l_name);
    return 0;
}
