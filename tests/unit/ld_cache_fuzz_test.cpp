// SPDX-License-Identifier: Apache-2.0
// The loader cache parser under AddressSanitizer and UBSan: truncated and
// randomly corrupted caches must give an error or a parse, never a read
// outside the input or a crash. Built from ld_cache.cpp itself with the
// sanitizers on (see CMakeLists.txt).
#include "ldconfig_fixture.hpp"
#include "sjail/core/gpu/ld_cache.hpp"

#include <gtest/gtest.h>
#include <random>

// Leak checking needs ptrace-like access that CI sandboxes may refuse.
extern "C" const char *__asan_default_options() {
    return "detect_leaks=0";
}

namespace {

// Parses a copy that ends exactly at the input's end, so ASan sees any overread.
bool parses(const std::string &bytes) {
    const std::unique_ptr<char[]> exact(new char[bytes.size() + 1]);
    std::copy(bytes.begin(), bytes.end(), exact.get());
    sjail::LdCache cache;
    const auto s = sjail::parse_ld_cache(std::string_view(exact.get(), bytes.size()), cache);
    if (s.ok()) {
        for (const auto &e : cache.entries) { // touch every string it returned
            EXPECT_LE(e.name.size() + e.path.size(), bytes.size());
        }
    } else {
        EXPECT_FALSE(s.message().empty());
    }
    return s.ok();
}

std::string generated_cache(const fixture::TempDir &dir) {
    fixture::install_host_libc(dir.path() + "/usr/lib/x86_64-linux-gnu");
    fixture::install_fake_libs("550.54.15", dir.path() + "/usr/lib/x86_64-linux-gnu");
    fixture::install_fake_libs("580.159.04", dir.path() + "/opt/lib/glibc-hwcaps/x86-64-v2");
    fixture::make_dirs(dir.path() + "/etc");
    fixture::write_text(dir.path() + "/etc/ld.so.conf", "/usr/lib/x86_64-linux-gnu\n/opt/lib\n");
    return fixture::read_bytes(fixture::make_cache(dir.path()));
}

} // namespace

TEST(LdCacheFuzz, EveryTruncationOfACacheWithHwcaps) {
    const fixture::TempDir dir;
    const std::string bytes = generated_cache(dir);
    ASSERT_TRUE(parses(bytes));
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        EXPECT_FALSE(parses(bytes.substr(0, n))) << n;
    }
}

TEST(LdCacheFuzz, SampledTruncationsOfTheHostCache) {
    const std::string bytes = fixture::read_bytes("/etc/ld.so.cache");
    ASSERT_TRUE(parses(bytes));
    std::mt19937 rng(20240605);
    std::uniform_int_distribution<std::size_t> length(0, bytes.size() - 1);
    for (int i = 0; i < 3000; ++i) {
        const std::size_t n = length(rng);
        EXPECT_FALSE(parses(bytes.substr(0, n))) << n;
    }
}

TEST(LdCacheFuzz, RandomByteCorruptionNeverReadsOutOfBounds) {
    const fixture::TempDir dir;
    const std::string good = generated_cache(dir);
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::size_t> where(0, good.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<int> count(1, 8);
    int refused = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string bad = good;
        for (int k = count(rng); k > 0; --k) {
            bad[where(rng)] = static_cast<char>(byte(rng));
        }
        refused += parses(bad) ? 0 : 1;
    }
    EXPECT_GT(refused, 0); // corruption of offsets and magic is seen
}

TEST(LdCacheFuzz, HeaderFieldsAtTheirExtremes) {
    const fixture::TempDir dir;
    const std::string good = generated_cache(dir);
    for (const std::size_t at : {20U, 24U, 32U}) {
        for (const std::uint32_t v : {0U, 1U, 0x7fffffffU, 0x80000000U, 0xfffffffcU, 0xffffffffU}) {
            std::string bad = good;
            for (std::size_t i = 0; i < 4; ++i) {
                bad[at + i] = static_cast<char>((v >> (8 * i)) & 0xffU);
            }
            const bool ok = parses(bad); // ASan and UBSan judge the reads
            if (at != 32 && v == 0xffffffffU) {
                EXPECT_FALSE(ok) << "field " << at; // more entries or strings than bytes
            }
        }
    }
}
