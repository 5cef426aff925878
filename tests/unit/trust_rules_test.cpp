// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/trust_rules.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

namespace sjail {
namespace {

constexpr unsigned kDir = S_IFDIR;
constexpr unsigned kFile = S_IFREG;
constexpr unsigned kLink = S_IFLNK;
constexpr unsigned kUser = 1000;

std::string why(unsigned owner, unsigned mode, PathRole role, unsigned caller = 0,
                bool read_only = false) {
    return untrusted_because({owner, mode, read_only}, sjail::checks_policy(caller), role);
}

TEST(TrustRules, RootOwnedAndNotWritableByOthersIsTrusted) {
    EXPECT_EQ(why(0, kDir | 0755, PathRole::directory_on_the_way), "");
    EXPECT_EQ(why(0, kFile | 0755, PathRole::file_to_use), "");
    EXPECT_EQ(why(0, kDir | 0700, PathRole::directory_to_write), "");
    EXPECT_EQ(why(0, kLink | 0777, PathRole::symlink), "");
}

TEST(TrustRules, AnotherOwnerIsNeverTrusted) {
    for (const auto role : {PathRole::directory_on_the_way, PathRole::symlink,
                            PathRole::file_to_use, PathRole::directory_to_write}) {
        const unsigned type = role == PathRole::symlink       ? kLink
                              : role == PathRole::file_to_use ? kFile
                                                              : kDir;
        EXPECT_EQ(why(kUser, type | 0755, role), "is owned by uid 1000");
        // not even on a read-only mount: its owner can remount or chmod elsewhere
        EXPECT_EQ(why(kUser, type | 0755, role, 0, true), "is owned by uid 1000");
    }
}

TEST(TrustRules, TheCallerMayOwnWhatItUses) {
    EXPECT_EQ(why(kUser, kFile | 0644, PathRole::file_to_use, kUser), "");
    EXPECT_EQ(why(2000, kFile | 0644, PathRole::file_to_use, kUser), "is owned by uid 2000");
    EXPECT_EQ(trusted_owners(0), "root");
    EXPECT_EQ(trusted_owners(kUser), "root or uid 1000");
}

TEST(TrustRules, WritableByGroupOrOthersIsNotTrusted) {
    EXPECT_EQ(why(0, kFile | 0775, PathRole::file_to_use),
              "is writable by group or others (mode 0775)");
    EXPECT_EQ(why(0, kFile | 0757, PathRole::file_to_use),
              "is writable by group or others (mode 0757)");
    EXPECT_EQ(why(0, kDir | 0777, PathRole::directory_on_the_way),
              "is writable by group or others (mode 0777)");
}

TEST(TrustRules, AStickyDirectoryMayBePassedButNotWrittenIn) {
    // /tmp: nobody can rename or remove what root put there, but anyone can
    // create names in it, so state files never go there.
    EXPECT_EQ(why(0, kDir | 01777, PathRole::directory_on_the_way), "");
    EXPECT_EQ(why(0, kDir | 01777, PathRole::directory_to_write),
              "is writable by group or others (mode 1777)");
    EXPECT_EQ(why(kUser, kDir | 01777, PathRole::directory_on_the_way), "is owned by uid 1000");
}

TEST(TrustRules, NothingOnAReadOnlyMountCanBeWritten) {
    // A Kubernetes ConfigMap volume: 0777 directories, mounted read-only.
    EXPECT_EQ(why(0, kDir | 0777, PathRole::directory_on_the_way, 0, true), "");
    EXPECT_EQ(why(0, kFile | 0666, PathRole::file_to_use, 0, true), "");
}

TEST(TrustRules, TheTypeMustFitTheRole) {
    EXPECT_EQ(why(0, kDir | 0755, PathRole::file_to_use), "is not a regular file");
    EXPECT_EQ(why(0, kFile | 0755, PathRole::directory_on_the_way), "is not a directory");
    EXPECT_EQ(why(0, S_IFCHR | 0666, PathRole::file_to_use), "is not a regular file");
}

TEST(TrustRules, ThePluginsPolicyTrustsRootAlone) {
    // Run as root, the checks' policy and the plugin's differ only in sticky
    // directories and read-only mounts, which the plugin never passes.
    EXPECT_EQ(untrusted_because({0, kDir | 0755, false}, kRootOnly, PathRole::directory_on_the_way),
              "");
    EXPECT_EQ(
        untrusted_because({0, kDir | 01777, false}, kRootOnly, PathRole::directory_on_the_way),
        "is writable by group or others (mode 1777)");
    EXPECT_EQ(untrusted_because({0, kDir | 0777, true}, kRootOnly, PathRole::directory_on_the_way),
              "is writable by group or others (mode 0777)");
    EXPECT_EQ(untrusted_because({kUser, kLink | 0777, false}, kRootOnly, PathRole::symlink),
              "is owned by uid 1000");
    EXPECT_EQ(untrusted_because({0, kLink | 0777, false}, kRootOnly, PathRole::symlink), "");
}

TEST(TrustRules, AStatusNamesThePathTheCauseAndTheFix) {
    EXPECT_TRUE(
        check_trusted("/j", {0, kDir | 0755, false}, kRootOnly, PathRole::directory_on_the_way)
            .ok());
    EXPECT_EQ(
        check_trusted("/j", {kUser, kDir | 0755, false}, kRootOnly, PathRole::directory_to_write)
            .message(),
        "/j is owned by uid 1000, not root; run: chown root:root /j");
    EXPECT_EQ(
        check_trusted("/j/f", {0, kFile | 0664, false}, kRootOnly, PathRole::file_to_use).message(),
        "/j/f is writable by group or others; run: chmod go-w /j/f");
    EXPECT_EQ(
        check_trusted("/j/f", {0, kDir | 0755, false}, kRootOnly, PathRole::file_to_use).message(),
        "/j/f is not a regular file");
    EXPECT_EQ(check_trusted("/j/f", {2000, kFile | 0644, false}, checks_policy(kUser),
                            PathRole::file_to_use)
                  .message(),
              "/j/f is owned by uid 2000, not root or uid 1000; run: chown root:root /j/f");
}

} // namespace
} // namespace sjail
