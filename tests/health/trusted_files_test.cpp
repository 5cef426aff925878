// SPDX-License-Identifier: Apache-2.0
// The path walk that decides what a check may run, load, read and write as
// root, on real files with real owners (chown needs root, as CI runs).
#include "test_util.hpp"
#include "trusted_files.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace sjh {
namespace {

namespace fs = std::filesystem;
constexpr uid_t kOther = 65534; // nobody

class TrustedPath : public ::testing::Test {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) {
            GTEST_SKIP() << "needs root to give files other owners";
        }
        root_ = dir_.path();
        fs::create_directories(root_ / "opt/bin");
        prog_ = root_ / "opt/bin/prog";
        std::ofstream(prog_) << "#!/bin/sh\n";
        fs::permissions(prog_, fs::perms(0755));
    }

    static std::string refusal(const fs::path &p, PathRole role = PathRole::file_to_use) {
        try {
            (void)find_trusted(p, role);
        } catch (const UntrustedPath &e) {
            return e.what();
        }
        return "(accepted)";
    }

    test::TempDir dir_;
    fs::path root_;
    fs::path prog_;
};

TEST_F(TrustedPath, ARootOwnedChainIsFoundAsItsCanonicalPath) {
    const auto found = find_trusted(root_ / "opt/bin/../bin/./prog", PathRole::file_to_use);
    EXPECT_EQ(found.error, 0);
    EXPECT_EQ(found.path, prog_.string());
    EXPECT_EQ(find_trusted_program(prog_).path, prog_.string());
}

TEST_F(TrustedPath, RootOwnedSymlinksAreFollowed) {
    fs::create_symlink("opt/bin", root_ / "rel");
    fs::create_symlink(prog_, root_ / "abs");
    EXPECT_EQ(find_trusted(root_ / "rel/prog", PathRole::file_to_use).path, prog_.string());
    EXPECT_EQ(find_trusted(root_ / "abs", PathRole::file_to_use).path, prog_.string());
}

TEST_F(TrustedPath, ADirectoryOfAnotherUserIsRefusedByName) {
    fs::create_directories(root_ / "home/alice");
    std::ofstream(root_ / "home/alice/prog") << "#!/bin/sh\n";
    ASSERT_EQ(::chown((root_ / "home/alice").c_str(), kOther, kOther), 0);
    const auto msg = refusal(root_ / "home/alice/prog");
    EXPECT_NE(msg.find("refusing '" + (root_ / "home/alice/prog").string() + "': '" +
                       (root_ / "home/alice").string() + "' is owned by uid 65534"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("must be owned by root"), std::string::npos) << msg;
}

TEST_F(TrustedPath, AFileOthersCanWriteIsRefused) {
    fs::permissions(prog_, fs::perms(0775));
    EXPECT_NE(
        refusal(prog_).find("'" + prog_.string() + "' is writable by group or others (mode 0775)"),
        std::string::npos);
    fs::permissions(prog_, fs::perms(0755));
    ASSERT_EQ(::chown(prog_.c_str(), kOther, 0), 0);
    EXPECT_NE(refusal(prog_).find("is owned by uid 65534"), std::string::npos);
}

TEST_F(TrustedPath, ASymlinkOfAnotherUserIsRefusedEvenIfItLeadsSomewhereTrusted) {
    fs::create_symlink(prog_, root_ / "link");
    ASSERT_EQ(::lchown((root_ / "link").c_str(), kOther, kOther), 0);
    EXPECT_NE(
        refusal(root_ / "link").find("'" + (root_ / "link").string() + "' is owned by uid 65534"),
        std::string::npos);
}

TEST_F(TrustedPath, AStickyDirectoryMayBePassedButHoldsNoState) {
    fs::create_directories(root_ / "shared/x");
    fs::permissions(root_ / "shared", fs::perms(01777));
    std::ofstream(root_ / "shared/x/prog") << "#!/bin/sh\n";
    EXPECT_EQ(find_trusted(root_ / "shared/x/prog", PathRole::file_to_use).error, 0);
    EXPECT_TRUE(check_state_dir(root_ / "shared/x"));
    try {
        (void)check_state_dir(root_ / "shared");
        FAIL() << "a sticky world-writable state directory was accepted";
    } catch (const UntrustedPath &e) {
        EXPECT_NE(std::string(e.what()).find("is writable by group or others (mode 1777)"),
                  std::string::npos)
            << e.what();
    }
}

TEST_F(TrustedPath, MissingPathsAreReportedNotRefused) {
    EXPECT_EQ(find_trusted(root_ / "opt/none", PathRole::file_to_use).error, ENOENT);
    EXPECT_EQ(find_trusted(prog_ / "below", PathRole::file_to_use).error, ENOTDIR);
    fs::create_symlink("loop", root_ / "loop");
    EXPECT_EQ(find_trusted(root_ / "loop", PathRole::file_to_use).error, ELOOP);
    EXPECT_FALSE(check_state_dir(root_ / "opt/state"));
}

TEST_F(TrustedPath, RelativePathsStartAtTheWorkingDirectory) {
    const auto before = fs::current_path();
    fs::current_path(root_ / "opt");
    const auto found = find_trusted("bin/prog", PathRole::file_to_use);
    fs::current_path(before);
    EXPECT_EQ(found.path, prog_.string());
}

TEST_F(TrustedPath, BareProgramNamesAreNeverLookedUpInPath) {
    // A planted "sh" first in $PATH: the lookup uses its own fixed list.
    std::ofstream(root_ / "opt/bin/sh") << "#!/bin/sh\necho planted\n";
    const std::string saved = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
    ::setenv("PATH", (root_ / "opt/bin").c_str(), 1);
    const auto sh = find_trusted_program("sh");
    const auto none = find_trusted_program("sjh-no-such-tool");
    ::setenv("PATH", saved.c_str(), 1);
    EXPECT_EQ(sh.error, 0);
    EXPECT_TRUE(sh.path == "/usr/bin/dash" || sh.path == "/bin/dash" || sh.path == "/usr/bin/sh" ||
                sh.path == "/bin/sh")
        << sh.path;
    EXPECT_EQ(none.error, ENOENT);
    // Every directory of the list counts, /usr/sbin as well as /usr/bin.
    EXPECT_EQ(find_trusted_program("ldconfig").path, "/usr/sbin/ldconfig");
}

TEST_F(TrustedPath, LibrariesByNameAreLeftToTheLoader) {
    EXPECT_EQ(trusted_library("libnvidia-ml.so.1"), "libnvidia-ml.so.1");
    EXPECT_EQ(trusted_library((root_ / "none.so").string()), (root_ / "none.so").string());
    EXPECT_EQ(trusted_library((root_ / "opt/../opt/bin/prog").string()), prog_.string());
    fs::permissions(prog_, fs::perms(0777));
    EXPECT_THROW(trusted_library(prog_.string()), UntrustedPath);
}

TEST_F(TrustedPath, StateDirectoriesAreMadeOnlyBelowTrustedOnes) {
    make_state_dir(root_ / "var/lib/health");
    struct stat st {};
    ASSERT_EQ(::stat((root_ / "var/lib/health").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755U);
    EXPECT_EQ(st.st_uid, 0U);
    EXPECT_TRUE(check_state_dir(root_ / "var/lib/health"));
    fs::create_directories(root_ / "home/alice");
    ASSERT_EQ(::chown((root_ / "home/alice").c_str(), kOther, kOther), 0);
    EXPECT_THROW(make_state_dir(root_ / "home/alice/state"), UntrustedPath);
    EXPECT_FALSE(fs::exists(root_ / "home/alice/state"));
}

// What a check writes as root (--metrics-file, its state) lands only in a
// directory nobody else can change: a user's symlink on the way, or a
// directory others can write in, is refused and nothing is written.
TEST_F(TrustedPath, FilesAreWrittenOnlyInTrustedDirectories) {
    fs::create_directories(root_ / "metrics");
    write_file_atomically((root_ / "metrics/../metrics/m.prom").string(), "ok 1\n");
    EXPECT_EQ(test::read_file(root_ / "metrics/m.prom"), "ok 1\n");

    fs::create_directories(root_ / "home/alice");
    ASSERT_EQ(::chown((root_ / "home/alice").c_str(), kOther, kOther), 0);
    fs::create_symlink(root_ / "opt", root_ / "home/alice/link");
    ASSERT_EQ(::lchown((root_ / "home/alice/link").c_str(), kOther, kOther), 0);
    EXPECT_THROW(write_file_atomically((root_ / "home/alice/link/m.prom").string(), "x"),
                 UntrustedPath);
    EXPECT_FALSE(fs::exists(root_ / "opt/m.prom"));

    fs::create_directories(root_ / "shared");
    fs::permissions(root_ / "shared", fs::perms(01777));
    EXPECT_THROW(write_file_atomically((root_ / "shared/m.prom").string(), "x"), UntrustedPath);
    EXPECT_FALSE(fs::exists(root_ / "shared/m.prom"));
}

TEST_F(TrustedPath, AMissingDirectoryOrNoFileNameIsAClearError) {
    try {
        write_file_atomically((root_ / "none/m.prom").string(), "x");
        FAIL() << "a file was written in a missing directory";
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find("its directory '" + (root_ / "none").string() +
                                             "': No such file or directory; create it first"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(write_file_atomically((root_ / "opt/").string(), "x"), std::runtime_error);
    EXPECT_THROW(write_file_atomically((root_ / "opt/..").string(), "x"), std::runtime_error);
}

} // namespace
} // namespace sjh
