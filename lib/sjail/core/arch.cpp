// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/arch.hpp"

#include <cstddef>

namespace sjail {
namespace {

// CMake's library directory for this build (from the compiler; empty where
// the toolchain names none) is the one the compiler's architecture gives.
static_assert(std::string_view(SJAIL_MULTIARCH).empty() ||
                  std::string_view(SJAIL_MULTIARCH) == kBuildArch.multiarch,
              "CMAKE_LIBRARY_ARCHITECTURE names another architecture than the compiler's");

constexpr std::string_view kElfMagic = "\x7f"
                                       "ELF";
constexpr std::size_t kMachineAt = 18; // e_machine, after e_ident (16) and e_type (2)
constexpr std::size_t kHeaderNeeded = kMachineAt + 2;

std::string machine_name(unsigned elf_class, unsigned machine) {
    const bool wide = elf_class == ELFCLASS64;
    for (const Arch *arch : {&kArchX8664, &kArchAarch64}) {
        if (wide && machine == arch->elf_machine) {
            return std::string(arch->name);
        }
    }
    if (!wide && machine == EM_386) {
        return "i386";
    }
    if (!wide && machine == EM_ARM) {
        return "32-bit arm";
    }
    if (!wide && machine == EM_X86_64) {
        return "x32";
    }
    return "ELF machine " + std::to_string(machine) + (wide ? " (64-bit)" : " (32-bit)");
}

} // namespace

std::string elf_arch_name(std::string_view header, std::string &error) {
    error.clear();
    if (header.size() < kHeaderNeeded || header.substr(0, kElfMagic.size()) != kElfMagic) {
        error = "not an ELF file";
        return "";
    }
    const auto elf_class = static_cast<unsigned char>(header[EI_CLASS]);
    if (elf_class != ELFCLASS32 && elf_class != ELFCLASS64) {
        error = "an ELF file of unknown class " + std::to_string(elf_class);
        return "";
    }
    const auto lo = static_cast<unsigned char>(header[kMachineAt]);
    const auto hi = static_cast<unsigned char>(header[kMachineAt + 1]);
    if (static_cast<unsigned char>(header[EI_DATA]) != ELFDATA2LSB) {
        return "big-endian ELF machine " + std::to_string((unsigned{lo} << 8U) | hi);
    }
    const unsigned machine = lo | (unsigned{hi} << 8U);
    return machine_name(elf_class, machine);
}

} // namespace sjail
