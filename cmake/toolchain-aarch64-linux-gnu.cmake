# SPDX-License-Identifier: Apache-2.0
# Cross build for arm64 (Grace nodes) on a Debian amd64 machine: Debian's
# aarch64-linux-gnu cross compiler, the arm64 libraries installed beside the
# host's (multiarch, /usr/lib/aarch64-linux-gnu), and the arm64 packages that
# cannot be installed beside the host's own unpacked into one directory,
# SLURM_JAIL_ARM64_DEPS (libslurm-dev: its libslurm has no multiarch support;
# libpam0g-dev: it would pull libc6-dev:arm64). Programs built here (the
# tests) run under qemu-aarch64-static, which takes the arm64 loader and
# libraries from the multiarch directories; the tests that need an arm64
# machine's own files (its /bin/sh, its loader cache, its ldconfig) find them
# in SLURM_JAIL_ARM64_ROOT, a small arm64 root. hack/build-arch prepares both
# directories and passes them. In a build container of the target's suite
# (images/build-images --arch arm64), the arm64 development packages are
# installed in the container's own tree: SLURM_JAIL_ARM64_DEPS=/ says so.
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake \
#         -DSLURM_JAIL_ARM64_DEPS=DIR -DSLURM_JAIL_ARM64_ROOT=DIR
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# The host's objdump cannot read arm64 ELF files (cmake/SlurmRelease.cmake
# reads libslurm's soname with it).
set(CMAKE_OBJDUMP aarch64-linux-gnu-objdump CACHE FILEPATH "objdump for arm64 ELF files")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
# The loader cache tests run arm64's own ldconfig, and read an arm64
# machine's files there (tests/unit/ldconfig_fixture.hpp).
set(SLURM_JAIL_TARGET_LDCONFIG "${SLURM_JAIL_ARM64_ROOT}/sbin/ldconfig")
set(SLURM_JAIL_TEST_MACHINE_ROOT "${SLURM_JAIL_ARM64_ROOT}")

# try_compile projects read this file again: hand them the directory too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES SLURM_JAIL_ARM64_DEPS SLURM_JAIL_ARM64_ROOT)
if(NOT SLURM_JAIL_ARM64_DEPS OR NOT IS_DIRECTORY "${SLURM_JAIL_ARM64_DEPS}/usr/include/slurm")
    message(FATAL_ERROR "SLURM_JAIL_ARM64_DEPS='${SLURM_JAIL_ARM64_DEPS}' holds no unpacked "
                        "libslurm-dev:arm64; build with hack/build-arch arm64, which prepares it")
endif()

# Headers, libraries and CMake packages: the unpacked packages, then the
# machine's own tree, whose arm64 files are in the aarch64-linux-gnu
# directories (find_library looks there first, from CMAKE_LIBRARY_ARCHITECTURE).
# Programs (objdump, pkg-config, qemu) are the host's.
set(CMAKE_FIND_ROOT_PATH "${SLURM_JAIL_ARM64_DEPS}" /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The unpacked headers are system headers, as they are on a node: their
# warnings are not the tree's. Installed ones already are.
if(NOT SLURM_JAIL_ARM64_DEPS STREQUAL "/")
    set(CMAKE_C_FLAGS_INIT "-isystem ${SLURM_JAIL_ARM64_DEPS}/usr/include")
    set(CMAKE_CXX_FLAGS_INIT "-isystem ${SLURM_JAIL_ARM64_DEPS}/usr/include")
endif()

# pkg-config reads the arm64 .pc files only; their paths are the node's
# (pam.pc's libdir is where PAM modules go), not the unpacked directory's.
set(ENV{PKG_CONFIG_LIBDIR}
    "${SLURM_JAIL_ARM64_DEPS}/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
unset(ENV{PKG_CONFIG_PATH})
unset(ENV{PKG_CONFIG_SYSROOT_DIR})
