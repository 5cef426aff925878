// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/path_rules.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

using namespace sjail;

TEST(PathRules, AbsolutePaths) {
    EXPECT_TRUE(check_absolute_path("x", "/").ok());
    EXPECT_TRUE(check_absolute_path("x", "/a/b.c/d-e").ok());
    EXPECT_FALSE(check_absolute_path("x", "").ok());
    EXPECT_FALSE(check_absolute_path("x", "a/b").ok());
    EXPECT_FALSE(check_absolute_path("x", "/a/./b").ok());
    EXPECT_FALSE(check_absolute_path("x", "/a/../b").ok());
    EXPECT_FALSE(check_absolute_path("x", "/a//b").ok());
    EXPECT_FALSE(check_absolute_path("x", "/a/").ok());
    EXPECT_FALSE(check_absolute_path("x", "/a b").ok());
    EXPECT_FALSE(check_absolute_path("x", "/a:b").ok());
}

TEST(PathRules, SplitComponents) {
    EXPECT_TRUE(split_components("/").empty());
    EXPECT_EQ(split_components("/a"), (std::vector<std::string>{"a"}));
    EXPECT_EQ(split_components("/a/bb/c"), (std::vector<std::string>{"a", "bb", "c"}));
}

TEST(PathRules, SameOrBelow) {
    EXPECT_TRUE(is_same_or_below("/dev", "/dev"));
    EXPECT_TRUE(is_same_or_below("/dev/shm", "/dev"));
    EXPECT_FALSE(is_same_or_below("/devices", "/dev"));
    EXPECT_FALSE(is_same_or_below("/de", "/dev"));
    EXPECT_TRUE(is_same_or_below("/anything", "/"));
}

TEST(PathRules, RootOwnedLikeSshd) {
    EXPECT_TRUE(check_root_owned("/j", 0, S_IFDIR | 0755).ok());
    EXPECT_TRUE(check_root_owned("/j", 0, S_IFDIR | 0700).ok());
    const auto not_root = check_root_owned("/j", 1000, S_IFDIR | 0755);
    EXPECT_NE(not_root.message().find("owned by uid 1000"), std::string::npos);
    EXPECT_NE(not_root.message().find("chown root:root /j"), std::string::npos);
    EXPECT_FALSE(check_root_owned("/j", 0, S_IFDIR | 0775).ok());
    EXPECT_FALSE(check_root_owned("/j", 0, S_IFDIR | 0757).ok());
    const auto sticky_tmp = check_root_owned("/tmp", 0, S_IFDIR | 01777);
    EXPECT_NE(sticky_tmp.message().find("chmod go-w /tmp"), std::string::npos);
}

TEST(PathRules, ASharedDirectoryIsRootsAndStickyWhenOthersWriteIt) {
    EXPECT_TRUE(check_shared_root_dir("/s", 0, S_IFDIR | 01777).ok());
    EXPECT_TRUE(check_shared_root_dir("/s", 0, S_IFDIR | 0755).ok());
    const auto not_sticky = check_shared_root_dir("/s", 0, S_IFDIR | 0777);
    EXPECT_NE(not_sticky.message().find("not sticky; run: chmod 1777 /s"), std::string::npos);
    const auto users = check_shared_root_dir("/s", 1000, S_IFDIR | 01777);
    EXPECT_NE(users.message().find("owned by uid 1000"), std::string::npos);
    EXPECT_FALSE(check_shared_root_dir("/s", 1000, S_IFDIR | 0755).ok());
}
