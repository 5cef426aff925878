// SPDX-License-Identifier: Apache-2.0
// The loader cache parser, on caches made by the node's real ldconfig.
#include "ldconfig_fixture.hpp"
#include "sjail/core/gpu/ld_cache.hpp"

#include <gtest/gtest.h>

using fixture::TempDir;
using sjail::LdCache;
using sjail::parse_ld_cache;

namespace {

std::vector<std::string> listed(const LdCache &cache) {
    std::vector<std::string> out;
    for (const auto &e : cache.entries) {
        out.push_back(e.name + "|" + e.path);
    }
    return out;
}

void put_u32(std::string &bytes, std::size_t at, std::uint32_t v) {
    for (std::size_t i = 0; i < 4; ++i) {
        bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xffU);
    }
}

std::uint32_t get_u32(const std::string &bytes, std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    }
    return v;
}

// A small root: libc and the fake 550 driver in the multiarch directory
// (/usr/lib/x86_64-linux-gnu), as the driver's packages lay it out.
std::string small_cache(const TempDir &dir) {
    const std::string lib = dir.path() + fixture::kMultiarchLib;
    fixture::install_host_libc(lib);
    fixture::install_fake_libs("550.54.15", lib);
    fixture::make_dirs(dir.path() + "/etc");
    fixture::write_text(dir.path() + "/etc/ld.so.conf", fixture::kMultiarchLib + "\n");
    return fixture::read_bytes(fixture::make_cache(dir.path()));
}

std::string parse_error(const std::string &bytes) {
    LdCache cache;
    const auto s = parse_ld_cache(bytes, cache);
    return s.ok() ? "" : s.message();
}

} // namespace

TEST(LdCache, HostCacheMatchesLdconfigPrint) {
    LdCache cache;
    const std::string host_cache = fixture::machine_file("/etc/ld.so.cache");
    const auto s = parse_ld_cache(fixture::read_bytes(host_cache), cache);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_GT(cache.entries.size(), 10U);
    EXPECT_EQ(listed(cache), fixture::ldconfig_print(host_cache));
    EXPECT_NE(cache.generator.find("ldconfig"), std::string::npos) << cache.generator;
    const auto *libc = sjail::find_ld_cache_entry(cache, "libc.so.6", sjail::kBuildArch);
    ASSERT_NE(libc, nullptr);
    EXPECT_EQ(libc->flags, sjail::kBuildArch.ld_cache_flags);
}

TEST(LdCache, GeneratedCacheListsTheFakeDriverAndLibc) {
    const TempDir dir;
    const std::string bytes = small_cache(dir);
    LdCache cache;
    const auto s = parse_ld_cache(bytes, cache);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(listed(cache), fixture::ldconfig_print(dir.path() + "/ld.so.cache"));
    for (const std::string name :
         {"libcuda.so.1", "libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1", "libc.so.6"}) {
        const auto *e = sjail::find_ld_cache_entry(cache, name, sjail::kBuildArch);
        ASSERT_NE(e, nullptr) << name;
        EXPECT_EQ(e->path, fixture::kMultiarchLib + "/" + name);
        EXPECT_TRUE(e->hwcaps_subdir.empty());
    }
    EXPECT_EQ(sjail::find_ld_cache_entry(cache, "libcuda.so.2", sjail::kBuildArch), nullptr);
}

TEST(LdCache, TheFirstDirectoryInTheConfWinsAsForTheLoader) {
    const TempDir dir;
    fixture::install_fake_libs("550.54.15", dir.path() + "/opt/old");
    fixture::install_fake_libs("580.159.04", dir.path() + "/opt/new");
    fixture::make_dirs(dir.path() + "/etc");
    fixture::write_text(dir.path() + "/etc/ld.so.conf", "/opt/new\n/opt/old\n");
    const std::string path = fixture::make_cache(dir.path());
    LdCache cache;
    ASSERT_TRUE(parse_ld_cache(fixture::read_bytes(path), cache).ok());
    EXPECT_EQ(listed(cache), fixture::ldconfig_print(path));
    const auto *e = sjail::find_ld_cache_entry(cache, "libcuda.so.1", sjail::kBuildArch);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->path, "/opt/new/libcuda.so.1");
    std::size_t both = 0;
    for (const auto &entry : cache.entries) {
        both += entry.name == "libcuda.so.1" ? 1U : 0U;
    }
    EXPECT_EQ(both, 2U); // the other one is there too, after it
}

TEST(LdCache, GlibcHwcapsEntriesAreNamedAndNotTakenForPlainLookups) {
    const TempDir dir;
    fixture::install_fake_libs("550.54.15", dir.path() + "/opt/lib/glibc-hwcaps/x86-64-v2");
    fixture::make_dirs(dir.path() + "/etc");
    fixture::write_text(dir.path() + "/etc/ld.so.conf", "/opt/lib\n");
    const std::string path = fixture::make_cache(dir.path());
    LdCache cache;
    const auto s = parse_ld_cache(fixture::read_bytes(path), cache);
    ASSERT_TRUE(s.ok()) << s.message();
    bool found = false;
    for (const auto &e : cache.entries) {
        if (e.name == "libcuda.so.1") {
            found = true;
            EXPECT_EQ(e.hwcaps_subdir, "x86-64-v2");
        }
    }
    EXPECT_TRUE(found);
    EXPECT_EQ(sjail::find_ld_cache_entry(cache, "libcuda.so.1", sjail::kBuildArch), nullptr);
}

TEST(LdCache, TheOldAndCompatFormatsAreRefusedWithTheFix) {
    const TempDir dir;
    small_cache(dir);
    for (const std::string format : {"old", "compat"}) {
        const std::string path = fixture::make_cache(dir.path(), {"-c", format});
        const std::string error = parse_error(fixture::read_bytes(path));
        EXPECT_NE(error.find("old libc5"), std::string::npos) << format << ": " << error;
        EXPECT_NE(error.find("ldconfig -c new"), std::string::npos) << error;
    }
}

TEST(LdCache, OtherFilesAreRefused) {
    EXPECT_NE(parse_error("").find("no \"glibc-ld.so.cache\" magic"), std::string::npos);
    EXPECT_NE(parse_error("hello world, not a cache at all, sorry, really not").find("magic"),
              std::string::npos);
    EXPECT_NE(parse_error(fixture::read_bytes(fixture::kMultiarchLib + "/libc.so.6")).find("magic"),
              std::string::npos);
    const TempDir dir;
    std::string bytes = small_cache(dir);
    std::string other_version = bytes;
    other_version.replace(17, 3, "1.0");
    EXPECT_NE(parse_error(other_version).find("version \"1.0\" is not supported"),
              std::string::npos);
    std::string big_endian = bytes;
    big_endian[28] = 3;
    EXPECT_NE(parse_error(big_endian).find("big-endian"), std::string::npos);
    std::string unset_endian = bytes; // as glibc 2.32 wrote it: still fine
    unset_endian[28] = 0;
    EXPECT_EQ(parse_error(unset_endian), "");
}

TEST(LdCache, EveryTruncationIsAnError) {
    const TempDir dir;
    const std::string bytes = small_cache(dir);
    ASSERT_EQ(parse_error(bytes), "");
    // The extension directory (ldconfig's generator string) is the tail;
    // cutting into it or anything before it must fail.
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        EXPECT_NE(parse_error(bytes.substr(0, n)), "") << "truncated to " << n;
    }
}

TEST(LdCache, CorruptOffsetsAreErrors) {
    const TempDir dir;
    const std::string good = small_cache(dir);
    const std::uint32_t nlibs = get_u32(good, 20);
    const std::uint32_t strings = 48 + nlibs * 24;
    const std::uint32_t strings_end = strings + get_u32(good, 24);
    ASSERT_GT(nlibs, 3U);

    std::string bad = good;
    put_u32(bad, 48 + 4, strings_end + 5); // entry 0's name beyond the strings
    EXPECT_NE(parse_error(bad).find("entry 0's name points at offset"), std::string::npos);

    bad = good;
    put_u32(bad, 48 + 24 + 8, 7); // entry 1's path inside the header
    EXPECT_NE(parse_error(bad).find("entry 1's path"), std::string::npos);

    bad = good;
    bad[strings_end - 1] = 'x'; // the last string loses its NUL
    put_u32(bad, 48 + 4, strings_end - 1);
    EXPECT_NE(parse_error(bad).find("runs past the end"), std::string::npos);

    bad = good;
    put_u32(bad, 20, 0xffffffffU); // 4 billion entries
    EXPECT_NE(parse_error(bad).find("truncated"), std::string::npos);

    bad = good;
    put_u32(bad, 24, 0xfffffff0U); // a string table larger than the file
    EXPECT_NE(parse_error(bad).find("truncated"), std::string::npos);

    bad = good;
    put_u32(bad, 32, get_u32(good, 32) + 2); // misaligned extension directory
    EXPECT_NE(parse_error(bad).find("misaligned"), std::string::npos);

    bad = good;
    put_u32(bad, 32, 0xfffffff0U);
    EXPECT_NE(parse_error(bad).find("extension directory offset"), std::string::npos);

    bad = good;
    const std::uint32_t ext = get_u32(good, 32);
    put_u32(bad, ext + 4, 1000); // 1000 sections that are not there
    EXPECT_NE(parse_error(bad).find("sections that do not fit"), std::string::npos);

    bad = good;
    put_u32(bad, ext + 8 + 12, 0xffffff00U); // the generator section's size
    EXPECT_NE(parse_error(bad).find("past the end of the file"), std::string::npos);

    bad = good;
    bad[48 + 16 + 7] = 0x40; // entry 0 claims a glibc-hwcaps subdirectory; there are none
    EXPECT_NE(parse_error(bad).find("glibc-hwcaps subdirectory"), std::string::npos);
}
