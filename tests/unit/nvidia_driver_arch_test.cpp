// SPDX-License-Identifier: Apache-2.0
// The architecture check of a driver root without a loader cache (the
// container toolkit's layout): each library's ELF header says what it is
// built for. The node is the build's architecture and the foreign one the
// other, so the same tests hold on an x86-64 and on an arm64 build.
#include "ldconfig_fixture.hpp"
#include "sjail/core/arch.hpp"
#include "sjail/core/gpu/nvidia_driver.hpp"

#include <elf.h>
#include <gtest/gtest.h>

using fixture::TempDir;
using sjail::Arch;
using sjail::kArchAarch64;
using sjail::kArchX8664;
using sjail::kBuildArch;
using sjail::LibraryName;
using Strings = std::vector<std::string>;

namespace {

const Arch &kForeign = kBuildArch.name == kArchX8664.name ? kArchAarch64 : kArchX8664;

// The first 64 bytes of a shared library: ELF identification, e_type
// ET_DYN and e_machine, in the byte order `data` says.
std::string elf_header(unsigned char elf_class, unsigned char data, std::uint16_t machine) {
    std::string h(64, '\0');
    h[0] = '\x7f';
    h[1] = 'E';
    h[2] = 'L';
    h[3] = 'F';
    h[EI_CLASS] = static_cast<char>(elf_class);
    h[EI_DATA] = static_cast<char>(data);
    h[EI_VERSION] = EV_CURRENT;
    const bool little = data == ELFDATA2LSB;
    h[little ? 16 : 17] = ET_DYN;
    h[little ? 18 : 19] = static_cast<char>(machine & 0xffU);
    h[little ? 19 : 18] = static_cast<char>(machine >> 8U);
    return h;
}

std::string library_of(const Arch &arch) {
    return elf_header(ELFCLASS64, ELFDATA2LSB, arch.elf_machine);
}

std::string mismatch(const std::string &header, const Arch &node = kBuildArch) {
    return sjail::library_arch_mismatch(header, node);
}

struct Kept {
    std::string error;
    Strings kept;    // DIR/NAME
    Strings ignored; // as keep_own_arch_libraries words them
};

// Names in a toolkit root at /run/toolkit, each with its file's header.
Kept keep(const std::vector<std::pair<LibraryName, std::string>> &files,
          const Arch &node = kBuildArch) {
    std::vector<LibraryName> names;
    Strings mismatches;
    for (const auto &[name, header] : files) {
        names.push_back(name);
        mismatches.push_back(sjail::library_arch_mismatch(header, node));
    }
    Kept out;
    std::vector<LibraryName> kept;
    const auto s =
        sjail::keep_own_arch_libraries(names, mismatches, node, "/run/toolkit", kept, out.ignored);
    out.error = s.message();
    for (const auto &n : kept) {
        out.kept.push_back(n.dir + "/" + n.name);
    }
    return out;
}

LibraryName lib64(const std::string &name, const std::string &real) {
    return {"/lib64", name, real};
}

LibraryName lib32(const std::string &name, const std::string &real) {
    return {"/lib", name, real};
}

} // namespace

TEST(DriverLibraryArch, TheHeaderSaysWhichLoaderCanLoadTheLibrary) {
    EXPECT_EQ(mismatch(library_of(kArchX8664), kArchX8664), "");
    EXPECT_EQ(mismatch(library_of(kArchAarch64), kArchAarch64), "");
    EXPECT_EQ(mismatch(library_of(kArchX8664), kArchAarch64), "is built for x86-64");
    EXPECT_EQ(mismatch(library_of(kArchAarch64), kArchX8664), "is built for aarch64");
    EXPECT_EQ(mismatch(library_of(kBuildArch)), "");
    EXPECT_EQ(mismatch(library_of(kForeign)), "is built for " + std::string(kForeign.name));
}

TEST(DriverLibraryArch, ThirtyTwoBitAndBigEndianLibrariesAreNotTheNodes) {
    EXPECT_EQ(mismatch(elf_header(ELFCLASS32, ELFDATA2LSB, EM_386), kArchX8664),
              "is built for i386");
    EXPECT_EQ(mismatch(elf_header(ELFCLASS32, ELFDATA2LSB, EM_ARM), kArchAarch64),
              "is built for 32-bit arm");
    // x32: the x86-64 machine in a 32-bit file.
    EXPECT_EQ(mismatch(elf_header(ELFCLASS32, ELFDATA2LSB, EM_X86_64), kArchX8664),
              "is built for x32");
    EXPECT_EQ(mismatch(elf_header(ELFCLASS64, ELFDATA2MSB, EM_AARCH64), kArchAarch64),
              "is built for big-endian ELF machine 183");
    EXPECT_EQ(mismatch(elf_header(ELFCLASS64, ELFDATA2LSB, EM_RISCV)),
              "is built for ELF machine 243 (64-bit)");
}

TEST(DriverLibraryArch, ATruncatedOrNonElfFileIsNoLibrary) {
    const std::string full = library_of(kBuildArch);
    EXPECT_EQ(mismatch(full.substr(0, 20)), ""); // e_machine is all it needs
    EXPECT_EQ(mismatch(full.substr(0, 19)), "is not an ELF file");
    EXPECT_EQ(mismatch(full.substr(0, 4)), "is not an ELF file");
    EXPECT_EQ(mismatch(""), "is not an ELF file");
    EXPECT_EQ(mismatch("/* GNU ld script */\nINPUT(libcuda.so.1)\n"), "is not an ELF file");
    EXPECT_EQ(mismatch(elf_header(7, ELFDATA2LSB, kBuildArch.elf_machine)),
              "is an ELF file of unknown class 7");
}

// Files on disk with the crafted headers, read back as the plugin reads
// them: the node's own architecture is taken, the other refused.
TEST(DriverLibraryArch, FixtureFilesOfBothArchitectures) {
    const TempDir dir;
    for (const Arch *arch : {&kArchX8664, &kArchAarch64}) {
        fixture::write_text(dir.path() + "/libcuda." + std::string(arch->dpkg),
                            library_of(*arch) + std::string(4096, '\0'));
    }
    const std::string own =
        fixture::read_bytes(dir.path() + "/libcuda." + std::string(kBuildArch.dpkg)).substr(0, 64);
    const std::string foreign =
        fixture::read_bytes(dir.path() + "/libcuda." + std::string(kForeign.dpkg)).substr(0, 64);
    EXPECT_EQ(mismatch(own), "");
    EXPECT_EQ(mismatch(foreign), "is built for " + std::string(kForeign.name));
    // And the build's own libc, as the machine the tests run for has it.
    const std::string libc = fixture::read_bytes(fixture::kMultiarchLib + "/libc.so.6");
    EXPECT_EQ(mismatch(libc.substr(0, 64)), "");
    EXPECT_EQ(mismatch(libc.substr(0, 64), kForeign),
              "is built for " + std::string(kBuildArch.name));

    const auto only_foreign =
        keep({{lib64("libcuda.so.1", "libcuda.so.580.159.04"), foreign},
              {lib64("libnvidia-ml.so.1", "libnvidia-ml.so.580.159.04"), foreign}});
    EXPECT_EQ(only_foreign.error, "/run/toolkit/lib64/libcuda.so.1 is built for " +
                                      std::string(kForeign.name) + "; this node is " +
                                      std::string(kBuildArch.name) +
                                      ": gpu_driver_root= must hold the node's own driver "
                                      "(install the NVIDIA driver built for " +
                                      std::string(kBuildArch.name) +
                                      " there, or point gpu_driver_root= at the root that "
                                      "holds it)");
    const auto only_own = keep({{lib64("libcuda.so.1", "libcuda.so.580.159.04"), own},
                                {lib64("libnvidia-ml.so.1", "libnvidia-ml.so.580.159.04"), own}});
    EXPECT_EQ(only_own.error, "");
    EXPECT_EQ(only_own.kept, (Strings{"/lib64/libcuda.so.1", "/lib64/libnvidia-ml.so.1"}));
    EXPECT_TRUE(only_own.ignored.empty());
}

TEST(DriverLibraryArch, TheToolkitsThirtyTwoBitCopiesAreLeftOutWithANote) {
    const std::string own = library_of(kBuildArch);
    const std::string i386 = elf_header(ELFCLASS32, ELFDATA2LSB, EM_386);
    const auto k = keep({{lib64("libcuda.so", "libcuda.so.550.54.15"), own},
                         {lib64("libcuda.so.1", "libcuda.so.550.54.15"), own},
                         {lib32("libcuda.so.1", "libcuda.so.550.54.15"), i386},
                         {lib32("libnvidia-ml.so.1", "libnvidia-ml.so.550.54.15"), i386},
                         {lib64("libnvidia-ml.so.1", "libnvidia-ml.so.550.54.15"), own}});
    EXPECT_EQ(k.error, "");
    EXPECT_EQ(k.kept,
              (Strings{"/lib64/libcuda.so", "/lib64/libcuda.so.1", "/lib64/libnvidia-ml.so.1"}));
    const std::string node(kBuildArch.name);
    EXPECT_EQ(
        k.ignored,
        (Strings{"/run/toolkit/lib/libcuda.so.1: is built for i386, this node is " + node,
                 "/run/toolkit/lib/libnvidia-ml.so.1: is built for i386, this node is " + node}));
}

TEST(DriverLibraryArch, AVersionSourceOfAnotherArchitectureOnlyIsAnError) {
    const std::string own = library_of(kBuildArch);
    const std::string foreign = library_of(kForeign);
    // CUDA of the node's architecture, NVML of the other only: a mixed-up
    // root, not a driver without NVML.
    const auto nvml = keep({{lib64("libcuda.so.1", "libcuda.so.580.159.04"), own},
                            {lib64("libnvidia-ml.so.1", "libnvidia-ml.so.580.159.04"), foreign}});
    EXPECT_EQ(nvml.error.substr(0, nvml.error.find(':')),
              "/run/toolkit/lib64/libnvidia-ml.so.1 is built for " + std::string(kForeign.name) +
                  "; this node is " + std::string(kBuildArch.name));
    // Other libraries of another architecture are only left out.
    const auto other =
        keep({{lib64("libcuda.so.1", "libcuda.so.580.159.04"), own},
              {lib64("libnvidia-ptxjitcompiler.so.1", "libnvidia-ptxjitcompiler.so.580.159.04"),
               foreign}});
    EXPECT_EQ(other.error, "");
    EXPECT_EQ(other.kept, (Strings{"/lib64/libcuda.so.1"}));
    EXPECT_EQ(other.ignored.size(), 1U);
    // A libcuda.so.1 that is no ELF file at all.
    const auto script =
        keep({{lib64("libcuda.so.1", "libcuda.so.580.159.04"), "INPUT(libcuda.so.580)\n"}});
    EXPECT_EQ(script.error.substr(0, script.error.find(':')),
              "/run/toolkit/lib64/libcuda.so.1 is not an ELF file; this node is " +
                  std::string(kBuildArch.name));
    // No driver names at all: nothing to refuse.
    EXPECT_EQ(keep({}).error, "");
}

TEST(DriverLibraryArch, EachNodeRefusesTheOthersDriver) {
    for (const Arch *node : {&kArchX8664, &kArchAarch64}) {
        const Arch &other = node == &kArchX8664 ? kArchAarch64 : kArchX8664;
        const auto k =
            keep({{lib64("libcuda.so.1", "libcuda.so.580.159.04"), library_of(other)}}, *node);
        EXPECT_NE(k.error.find("is built for " + std::string(other.name) + "; this node is " +
                               std::string(node->name)),
                  std::string::npos)
            << k.error;
        EXPECT_TRUE(k.kept.empty());
        const auto own =
            keep({{lib64("libcuda.so.1", "libcuda.so.580.159.04"), library_of(*node)}}, *node);
        EXPECT_EQ(own.error, "");
        EXPECT_EQ(own.kept.size(), 1U);
    }
}
