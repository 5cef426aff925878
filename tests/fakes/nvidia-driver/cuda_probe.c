// SPDX-License-Identifier: Apache-2.0
/* A CUDA program linked the normal way (-lcuda, no rpath): the loader must
 * find libcuda.so.1 by itself. Prints what the driver reports and the file
 * the loader took libcuda from. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);

int main(void) {
    const CUresult init = cuInit(0);
    int version = 0;
    const CUresult got = cuDriverGetVersion(&version);
    Dl_info info;
    void *address = NULL;
    CUresult (*fn)(unsigned int) = cuInit;
    memcpy(&address, &fn, sizeof(address));
    if (dladdr(address, &info) == 0 || info.dli_fname == NULL) {
        return 1;
    }
    printf("cuInit=%d cuDriverGetVersion=%d version=%d libcuda=%s\n", init, got, version,
           info.dli_fname);
    return init == 0 && got == 0 ? 0 : 1;
}
