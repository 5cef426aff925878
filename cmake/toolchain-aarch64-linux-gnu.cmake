# SPDX-License-Identifier: Apache-2.0
# Cross build for arm64 (Grace nodes) on a Debian amd64 machine: Debian's
# aarch64-linux-gnu cross compiler, the arm64 libraries installed beside the
# host's (multiarch, /usr/lib/aarch64-linux-gnu), and the arm64 packages that
# cannot be installed beside the host's own unpacked into one directory,
# SLURM_JAIL_ARM64_DEPS (libslurm-dev: its libslurm has no multiarch support;
# libpam0g-dev: it would pull libc6-dev:arm64). hack/build-arch prepares that
# directory and passes it. Programs built here (the tests) run under
# qemu-aarch64-static, which takes the arm64 loader and libraries from the
# multiarch directories.
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake -DSLURM_JAIL_ARM64_DEPS=DIR
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# The host's objdump cannot read arm64 ELF files (cmake/SlurmRelease.cmake
# reads libslurm's soname with it).
set(CMAKE_OBJDUMP aarch64-linux-gnu-objdump CACHE FILEPATH "objdump for arm64 ELF files")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)

# try_compile projects read this file again: hand them the directory too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES SLURM_JAIL_ARM64_DEPS)
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

# pkg-config reads the arm64 .pc files only; their paths are the node's
# (pam.pc's libdir is where PAM modules go), not the unpacked directory's.
set(ENV{PKG_CONFIG_LIBDIR}
    "${SLURM_JAIL_ARM64_DEPS}/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
unset(ENV{PKG_CONFIG_PATH})
unset(ENV{PKG_CONFIG_SYSROOT_DIR})
