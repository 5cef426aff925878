// SPDX-License-Identifier: Apache-2.0
// Loader caches of each architecture, and of several: the loader of the
// node's architecture takes only its own entries, and a cache with none of
// them is an error. The caches are made by this machine's real ldconfig,
// with their entries' ABI flags then set as another architecture's ldconfig
// sets them; the node's architecture is a parameter, so both are exercised
// whatever this machine is.
#include "ldconfig_fixture.hpp"
#include "sjail/core/arch.hpp"
#include "sjail/core/gpu/ld_cache.hpp"
#include "sjail/core/gpu/ld_cache_arch.hpp"
#include "sjail/core/gpu/nvidia_driver.hpp"

#include <gtest/gtest.h>

using fixture::TempDir;
using sjail::kArchAarch64;
using sjail::kArchX8664;
using sjail::LdCache;
using Strings = std::vector<std::string>;

namespace {

const std::string kX86Lib = "/usr/lib/x86_64-linux-gnu";
const std::string kArmLib = "/usr/lib/aarch64-linux-gnu";

// A root with libc and fake driver VERSION in each of `dirs` (in ld.so.conf
// order), and its cache as this machine's ldconfig writes it.
std::string cache_over(const TempDir &dir,
                       const std::vector<std::pair<std::string, std::string>> &dirs) {
    std::string conf;
    for (const auto &[lib, version] : dirs) {
        fixture::install_host_libc(dir.path() + lib);
        fixture::install_fake_libs(version, dir.path() + lib);
        conf += lib + "\n";
    }
    fixture::make_dirs(dir.path() + "/etc");
    fixture::write_text(dir.path() + "/etc/ld.so.conf", conf);
    return fixture::read_bytes(fixture::make_cache(dir.path()));
}

LdCache parsed(const std::string &bytes) {
    LdCache cache;
    const auto s = sjail::parse_ld_cache(bytes, cache);
    EXPECT_TRUE(s.ok()) << s.message();
    return cache;
}

// An aarch64 node's cache: libc and driver 580 in /usr/lib/aarch64-linux-gnu.
LdCache aarch64_cache(const TempDir &dir) {
    const std::string bytes = cache_over(dir, {{kArmLib, "580.159.04"}});
    return parsed(fixture::with_entry_flags(bytes, "/", kArchAarch64.ld_cache_flags));
}

// A multiarch node's: x86-64 driver 550 and aarch64 driver 580, aarch64 first.
LdCache mixed_cache(const TempDir &dir) {
    std::string bytes = cache_over(dir, {{kArmLib, "580.159.04"}, {kX86Lib, "550.54.15"}});
    bytes = fixture::with_entry_flags(bytes, kArmLib + "/", kArchAarch64.ld_cache_flags);
    return parsed(fixture::with_entry_flags(bytes, kX86Lib + "/", kArchX8664.ld_cache_flags));
}

Strings candidate_paths(const LdCache &cache, const sjail::Arch &arch) {
    Strings out;
    for (const auto &c : sjail::driver_library_candidates(cache, arch)) {
        out.push_back(c.dir + "/" + c.name);
    }
    return out;
}

std::string arch_error(const LdCache &cache, const sjail::Arch &node) {
    const auto s = sjail::check_ld_cache_arch(cache, node, "/etc/ld.so.cache");
    return s.ok() ? "" : s.message();
}

// The first bytes of this machine's /bin/sh with another class and machine.
std::string elf_header(unsigned char elf_class, std::uint16_t machine) {
    std::string header = fixture::read_bytes("/bin/sh").substr(0, 64);
    header[EI_CLASS] = static_cast<char>(elf_class);
    header[18] = static_cast<char>(machine & 0xffU);
    header[19] = static_cast<char>(machine >> 8U);
    return header;
}

std::string elf_name(const std::string &header) {
    std::string error;
    std::string name = sjail::elf_arch_name(header, error);
    return error.empty() ? name : "error: " + error;
}

} // namespace

TEST(LdCacheArch, AnAarch64CacheIsReadAndTheAarch64LoaderFindsItsDriver) {
    const TempDir dir;
    const LdCache cache = aarch64_cache(dir);
    ASSERT_FALSE(cache.entries.empty());
    for (const auto &e : cache.entries) {
        EXPECT_EQ(sjail::ld_cache_flags_arch(e.flags), "aarch64") << e.path;
    }
    const auto *cuda = sjail::find_ld_cache_entry(cache, "libcuda.so.1", kArchAarch64);
    ASSERT_NE(cuda, nullptr);
    EXPECT_EQ(cuda->path, kArmLib + "/libcuda.so.1");
    EXPECT_NE(sjail::find_ld_cache_entry(cache, "libc.so.6", kArchAarch64), nullptr);
    EXPECT_EQ(candidate_paths(cache, kArchAarch64),
              (Strings{kArmLib + "/libnvidia-ptxjitcompiler.so.1",
                       kArmLib + "/libnvidia-ptxjitcompiler.so", kArmLib + "/libnvidia-ml.so.1",
                       kArmLib + "/libnvidia-ml.so", kArmLib + "/libcuda.so.1",
                       kArmLib + "/libcuda.so"}));
    EXPECT_EQ(arch_error(cache, kArchAarch64), "");
}

TEST(LdCacheArch, TheX8664LoaderTakesNothingFromAnAarch64Cache) {
    const TempDir dir;
    const LdCache cache = aarch64_cache(dir);
    EXPECT_EQ(sjail::find_ld_cache_entry(cache, "libcuda.so.1", kArchX8664), nullptr);
    EXPECT_EQ(sjail::find_ld_cache_entry(cache, "libc.so.6", kArchX8664), nullptr);
    EXPECT_TRUE(candidate_paths(cache, kArchX8664).empty());
}

TEST(LdCacheArch, InAMixedCacheEachLoaderTakesItsOwnEntriesOnly) {
    const TempDir dir;
    const LdCache cache = mixed_cache(dir);
    for (const auto *arch : {&kArchAarch64, &kArchX8664}) {
        const std::string lib = arch == &kArchAarch64 ? kArmLib : kX86Lib;
        const auto paths = candidate_paths(cache, *arch);
        EXPECT_EQ(paths.size(), 6U) << arch->name;
        for (const auto &path : paths) {
            EXPECT_TRUE(path.starts_with(lib + "/")) << arch->name << ": " << path;
        }
        const auto *libc = sjail::find_ld_cache_entry(cache, "libc.so.6", *arch);
        ASSERT_NE(libc, nullptr) << arch->name;
        EXPECT_EQ(libc->path, lib + "/libc.so.6");
        EXPECT_EQ(arch_error(cache, *arch), "") << arch->name;
    }
    // The x86-64 loader skips the aarch64 libcuda listed ahead of its own.
    EXPECT_EQ(sjail::find_ld_cache_entry(cache, "libcuda.so.1", kArchX8664)->path,
              kX86Lib + "/libcuda.so.1");
}

TEST(LdCacheArch, ACacheOfAnotherArchitectureOnlyIsAnErrorNamingBoth) {
    const TempDir dir;
    const LdCache arm = aarch64_cache(dir);
    EXPECT_EQ(arch_error(arm, kArchX8664),
              "the loader cache /etc/ld.so.cache holds only aarch64 entries; this node is x86-64, "
              "so its loader takes none of them (ldconfig wrote it over another architecture's "
              "libraries)");
    const TempDir dir2;
    const LdCache x86 = parsed(fixture::with_entry_flags(cache_over(dir2, {{kX86Lib, "550.54.15"}}),
                                                         "/", kArchX8664.ld_cache_flags));
    EXPECT_NE(arch_error(x86, kArchAarch64).find("holds only x86-64 entries; this node is aarch64"),
              std::string::npos)
        << arch_error(x86, kArchAarch64);
}

TEST(LdCacheArch, EveryForeignArchitectureIsNamedOnce) {
    const TempDir dir;
    std::string bytes = cache_over(dir, {{"/usr/lib/i386-linux-gnu", "550.54.15"},
                                         {"/usr/lib/arm-linux-gnueabihf", "550.54.15"}});
    bytes = fixture::with_entry_flags(bytes, "/usr/lib/i386-linux-gnu/", 0x0003);
    bytes = fixture::with_entry_flags(bytes, "/usr/lib/arm-linux-gnueabihf/", 0x0903);
    const std::string error = arch_error(parsed(bytes), kArchAarch64);
    EXPECT_NE(error.find("holds only armhf and i386 entries; this node is aarch64"),
              std::string::npos)
        << error;
}

TEST(LdCacheArch, AnEmptyCachePasses) {
    const TempDir dir;
    fixture::make_dirs(dir.path() + "/etc");
    fixture::write_text(dir.path() + "/etc/ld.so.conf", "");
    const LdCache cache = parsed(fixture::read_bytes(fixture::make_cache(dir.path())));
    EXPECT_TRUE(cache.entries.empty());
    EXPECT_EQ(arch_error(cache, kArchX8664), "");
    EXPECT_EQ(arch_error(cache, kArchAarch64), "");
}

TEST(LdCacheArch, FlagsAreNamedAsLdconfigNamesTheirArchitecture) {
    EXPECT_EQ(sjail::ld_cache_flags_arch(0x0303), "x86-64");
    EXPECT_EQ(sjail::ld_cache_flags_arch(0x0a03), "aarch64");
    EXPECT_EQ(sjail::ld_cache_flags_arch(0x0003), "i386");
    EXPECT_EQ(sjail::ld_cache_flags_arch(0x0803), "x32");
    EXPECT_EQ(sjail::ld_cache_flags_arch(0x0903), "armhf");
    EXPECT_EQ(sjail::ld_cache_flags_arch(0x0c03), "flags 0x0c03");
    EXPECT_EQ(sjail::ld_cache_flags_arch(0x0001), "flags 0x0001");
}

TEST(Arch, TheBuildsArchitectureIsThisMachines) {
    EXPECT_EQ(sjail::kBuildArch.multiarch, std::string_view(SJAIL_MULTIARCH));
    EXPECT_EQ(elf_name(fixture::read_bytes(fixture::machine_file("/bin/sh"))),
              sjail::kBuildArch.name);
    LdCache cache;
    ASSERT_TRUE(
        sjail::parse_ld_cache(fixture::read_bytes(fixture::machine_file("/etc/ld.so.cache")), cache)
            .ok());
    EXPECT_EQ(sjail::check_ld_cache_arch(cache, sjail::kBuildArch, "/etc/ld.so.cache").message(),
              "");
}

TEST(Arch, ElfFilesAreNamedByClassAndMachine) {
    EXPECT_EQ(elf_name(elf_header(ELFCLASS64, EM_X86_64)), "x86-64");
    EXPECT_EQ(elf_name(elf_header(ELFCLASS64, EM_AARCH64)), "aarch64");
    EXPECT_EQ(elf_name(elf_header(ELFCLASS32, EM_386)), "i386");
    EXPECT_EQ(elf_name(elf_header(ELFCLASS32, EM_ARM)), "32-bit arm");
    EXPECT_EQ(elf_name(elf_header(ELFCLASS32, EM_X86_64)), "x32");
    EXPECT_EQ(elf_name(elf_header(ELFCLASS64, EM_RISCV)), "ELF machine 243 (64-bit)");
    std::string big = elf_header(ELFCLASS64, 0);
    big[EI_DATA] = ELFDATA2MSB;
    big[19] = EM_S390;
    EXPECT_EQ(elf_name(big), "big-endian ELF machine 22");
    EXPECT_EQ(elf_name(elf_header(7, EM_X86_64)), "error: an ELF file of unknown class 7");
    EXPECT_EQ(elf_name("#!/bin/sh\necho this is a script, not a program\n"),
              "error: not an ELF file");
    EXPECT_EQ(elf_name("\x7f"
                       "ELF"),
              "error: not an ELF file");
}
