// SPDX-License-Identifier: Apache-2.0
// The driver memo: what a loader cache listed, kept under the cache's identity.
#include "sjail/core/gpu/driver_memo.hpp"

#include <gtest/gtest.h>

using sjail::driver_memo_lookup;
using sjail::driver_memo_text;
using sjail::LibraryName;

namespace {

const std::string kKey =
    "ld.so.cache /etc/ld.so.cache dev=2049 ino=77 size=44923 mtime=1.2 ctime=1.2";

std::vector<LibraryName> two_names() {
    return {{"/usr/lib/x86_64-linux-gnu", "libcuda.so.1", ""},
            {"/usr/lib/x86_64-linux-gnu", "libnvidia-ml.so.1", ""}};
}

} // namespace

TEST(DriverMemo, GivesBackWhatItKeptForTheSameKey) {
    const std::string memo = driver_memo_text(kKey, two_names());
    std::vector<LibraryName> got;
    ASSERT_TRUE(driver_memo_lookup(memo, kKey, got));
    EXPECT_EQ(got, two_names());
}

TEST(DriverMemo, KeepsAnEmptyListSoACpuNodeSkipsTheRead) {
    const std::string memo = driver_memo_text(kKey, {});
    std::vector<LibraryName> got = two_names();
    ASSERT_TRUE(driver_memo_lookup(memo, kKey, got));
    EXPECT_TRUE(got.empty());
}

TEST(DriverMemo, AnotherCacheIdentityIsAMiss) {
    const std::string memo = driver_memo_text(kKey, two_names());
    std::vector<LibraryName> got;
    EXPECT_FALSE(driver_memo_lookup(memo, kKey + "0", got));
    EXPECT_FALSE(driver_memo_lookup(memo, "", got));
    EXPECT_TRUE(got.empty());
}

TEST(DriverMemo, ATruncatedOrPaddedMemoIsAMiss) {
    const std::string memo = driver_memo_text(kKey, two_names());
    std::vector<LibraryName> got;
    for (std::size_t cut = 0; cut < memo.size(); ++cut) {
        EXPECT_FALSE(driver_memo_lookup(memo.substr(0, cut), kKey, got)) << "cut at " << cut;
    }
    EXPECT_FALSE(driver_memo_lookup(memo + "extra\n", kKey, got));
    EXPECT_FALSE(driver_memo_lookup("", kKey, got));
    EXPECT_TRUE(got.empty());
}

TEST(DriverMemo, ACountThatIsNotANumberIsAMiss) {
    std::string memo = driver_memo_text(kKey, {});
    const auto count = memo.rfind("0\n");
    ASSERT_NE(count, std::string::npos) << memo;
    memo[count] = 'x';
    std::vector<LibraryName> got;
    EXPECT_FALSE(driver_memo_lookup(memo, kKey, got));
}

TEST(DriverMemo, ANameWithANewlineIsNeverKept) {
    EXPECT_EQ(driver_memo_text(kKey, {{"/lib", "libcuda.so.1\nx", ""}}), "");
    EXPECT_EQ(driver_memo_text(kKey + "\n", {}), "");
}
