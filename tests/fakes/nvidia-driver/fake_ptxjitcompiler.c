// SPDX-License-Identifier: Apache-2.0
/* A fake libnvidia-ptxjitcompiler.so.<version>: the real one is loaded by
 * libcuda to compile PTX. Here it only has to exist, with its soname, so that
 * the driver's file set has more than the two libraries the tests call. */
__attribute__((visibility("default"))) const char *fake_ptxjit_driver_version(void) {
    return FAKE_DRIVER_VERSION;
}
