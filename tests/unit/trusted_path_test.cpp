// SPDX-License-Identifier: Apache-2.0
// The one trusted-path resolver (sjail/sys/trusted_path.hpp) on real files
// with real owners, under the plugin's policy (root only) and the GPU health
// checks' (the caller too, sticky directories passed). chown needs root.
#include "kit/files.hpp"
#include "kit/temp_dir.hpp"
#include "sjail/sys/trusted_path.hpp"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace sjail {
namespace {

namespace fs = std::filesystem;

// ROOT/opt/bin/prog in a root-owned tree; kOther owns what the tests hand over.
class TrustedPathTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) {
            GTEST_SKIP() << "needs root to give files other owners";
        }
        ASSERT_EQ(kit::mkdir_p((root_ / "opt/bin").string(), 0755), "");
        ASSERT_EQ(kit::write_file(prog_.string(), "#!/bin/sh\n"), "");
    }

    // Opens `path` on the node; "" when accepted, else the status.
    static std::string open(const fs::path &path, TrustedKind want, TrustedOpen &out,
                            const TrustPolicy &policy = kRootOnly) {
        return open_trusted_on_node(path.string(), want, out, false, policy).message();
    }

    static constexpr unsigned kOther = 65534;     // nobody
    kit::TempDir dir_{SJAIL_TEST_ROOT_OWNED_DIR}; // the plugin's policy refuses /tmp
    fs::path root_ = dir_.path();
    fs::path prog_ = root_ / "opt/bin/prog";
};

TEST_F(TrustedPathTest, TheResolvedPathIsCanonical) {
    fs::create_symlink("opt/bin", root_ / "rel");
    TrustedOpen out;
    // ".." after a symlink leaves the directory it led to, as the kernel does.
    ASSERT_EQ(open(root_ / "rel/../bin/./prog", TrustedKind::File, out), "");
    EXPECT_EQ(out.shown, prog_.string());
    EXPECT_EQ(out.error, 0);
}

TEST_F(TrustedPathTest, AStickyDirectoryIsPassedOnlyUnderTheChecksPolicy) {
    fs::create_directories(root_ / "shared/x");
    fs::permissions(root_ / "shared", fs::perms(01777));
    std::ofstream(root_ / "shared/x/prog") << "#!/bin/sh\n";
    TrustedOpen out;
    EXPECT_EQ(open(root_ / "shared/x/prog", TrustedKind::File, out),
              (root_ / "shared").string() + " is writable by group or others; run: chmod go-w " +
                  (root_ / "shared").string());
    EXPECT_EQ(out.refused_because, "is writable by group or others (mode 1777)");
    EXPECT_EQ(out.shown, (root_ / "shared").string());
    const auto checks = checks_policy(0);
    EXPECT_EQ(open(root_ / "shared/x/prog", TrustedKind::File, out, checks), "");
    EXPECT_EQ(open(root_ / "shared", TrustedKind::PassedDirectory, out, checks), "");
    EXPECT_NE(open(root_ / "shared", TrustedKind::Directory, out, checks), "");
    EXPECT_EQ(out.refused_because, "is writable by group or others (mode 1777)");
}

TEST_F(TrustedPathTest, TheCallerMayOwnWhatTheChecksUse) {
    ASSERT_EQ(::chown((root_ / "opt").c_str(), kOther, kOther), 0);
    TrustedOpen out;
    EXPECT_NE(open(prog_, TrustedKind::File, out), "");
    EXPECT_EQ(out.refused_because, "is owned by uid 65534");
    EXPECT_EQ(out.shown, (root_ / "opt").string());
    EXPECT_EQ(open(prog_, TrustedKind::File, out, checks_policy(kOther)), "");
    EXPECT_NE(open(prog_, TrustedKind::File, out, checks_policy(1000)), "");
}

TEST_F(TrustedPathTest, AnotherUsersSymlinkIsRefusedWithItsOwner) {
    fs::create_symlink(prog_, root_ / "link");
    ASSERT_EQ(::lchown((root_ / "link").c_str(), kOther, kOther), 0);
    TrustedOpen out;
    EXPECT_NE(open(root_ / "link", TrustedKind::File, out).find("never follows a user's symlink"),
              std::string::npos);
    EXPECT_EQ(out.refused_because, "is owned by uid 65534");
    EXPECT_EQ(open(root_ / "link", TrustedKind::File, out, checks_policy(kOther)), "");
}

TEST_F(TrustedPathTest, PathsThatCannotBeFollowedCarryTheirErrno) {
    TrustedOpen out;
    EXPECT_NE(open(root_ / "opt/none", TrustedKind::File, out), "");
    EXPECT_EQ(out.error, ENOENT);
    EXPECT_TRUE(out.missing);
    EXPECT_NE(open(prog_ / "below", TrustedKind::File, out), "");
    EXPECT_EQ(out.error, ENOTDIR);
    fs::create_symlink("loop", root_ / "loop");
    EXPECT_NE(open(root_ / "loop", TrustedKind::File, out), "");
    EXPECT_EQ(out.error, ELOOP);
    EXPECT_TRUE(out.refused_because.empty());
}

} // namespace
} // namespace sjail
