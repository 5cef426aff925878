// SPDX-License-Identifier: Apache-2.0
// CPU architectures, as the loader, ldconfig and Debian name them. Pure.
//
// A node runs the plugin built for its own architecture, so the build's
// architecture (kBuildArch, chosen by the compiler) is the node's: its
// loader takes only the loader cache entries of that architecture, its
// libraries live in that multiarch directory, and its programs are ELF
// files for that machine. Code that needs one of these takes an Arch, so
// tests on one architecture exercise the other.
#pragma once

#include <cstdint>
#include <elf.h>
#include <string>
#include <string_view>

namespace sjail {

struct Arch {
    std::string_view name;       // "x86-64", "aarch64"
    std::int32_t ld_cache_flags; // the loader cache entry flags its loader takes
    std::string_view multiarch;  // Debian's library directory name, "x86_64-linux-gnu"
    std::uint16_t elf_machine;   // e_machine of its ELF files
    std::string_view dpkg;       // Debian's architecture name, "amd64"
};

// glibc's ldconfig flags: the low byte is the library type (ELF, libc6),
// the high byte the ABI; each loader takes exactly its own pair.
inline constexpr std::int32_t kLdCacheElfLibc6 = 0x0003;
inline constexpr std::int32_t kLdCacheX8664Lib64 = 0x0300;
inline constexpr std::int32_t kLdCacheAarch64Lib64 = 0x0a00;

inline constexpr Arch kArchX8664{"x86-64", kLdCacheElfLibc6 | kLdCacheX8664Lib64,
                                 "x86_64-linux-gnu", EM_X86_64, "amd64"};
inline constexpr Arch kArchAarch64{"aarch64", kLdCacheElfLibc6 | kLdCacheAarch64Lib64,
                                   "aarch64-linux-gnu", EM_AARCH64, "arm64"};

#if defined(__x86_64__)
inline constexpr const Arch &kBuildArch = kArchX8664;
#elif defined(__aarch64__)
inline constexpr const Arch &kBuildArch = kArchAarch64;
#else
#error                                                                                             \
    "slurm-jail knows the loader cache flags and library directory of x86-64 and aarch64 only; add this architecture to sjail/core/arch.hpp"
#endif

// The architecture of an ELF file from its first bytes (at least 20): its
// class and machine, e.g. "x86-64", "aarch64", "i386", "32-bit arm", or
// "ELF machine 243 (64-bit)", "big-endian ELF machine 22". `error` is set
// instead when the bytes are not the start of an ELF file.
std::string elf_arch_name(std::string_view header, std::string &error);

} // namespace sjail
