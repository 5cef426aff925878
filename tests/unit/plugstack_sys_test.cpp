// SPDX-License-Identifier: Apache-2.0
// Reading plugstack.conf and its includes from real files (sys/plugstack.hpp):
// globs, relative and nested includes, loops, depth, patterns matching
// nothing, and files that are not root's. Needs root (the files must be
// root-owned); each test works in a directory of its own under /tmp.
#include "sjail/sys/plugstack.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace sjail {
namespace {

namespace fs = std::filesystem;

class PlugstackFiles : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string tmpl = "/tmp/sjail-plugstack.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
        ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
    }
    void TearDown() override { fs::remove_all(dir_); }

    // DIR/REL with `text`, root-owned, mode 0644; its directories made.
    std::string write(const std::string &rel, const std::string &text) {
        std::string path = dir_ + "/" + rel;
        fs::create_directories(fs::path(path).parent_path());
        std::ofstream(path) << text;
        EXPECT_EQ(::chmod(path.c_str(), 0644), 0);
        return path;
    }

    [[nodiscard]] std::vector<std::string> plugins(const PlugstackRead &read) const {
        std::vector<std::string> out;
        for (const auto &line : read.plugins) {
            out.push_back(line.plugin + "@" + line.origin.substr(dir_.size() + 1));
        }
        return out;
    }

    std::string dir_;
};

using Names = std::vector<std::string>;

TEST_F(PlugstackFiles, ChrootLineInPlugstackConfD) {
    const auto top = write("plugstack.conf", "include " + dir_ + "/plugstack.conf.d/*\n");
    write("plugstack.conf.d/10-pyxis.conf", "required spank_pyxis.so\n");
    write("plugstack.conf.d/20-chroot.conf", "# the jail\nrequired chroot.so jail=/mnt/jail\n");
    const auto read = read_plugstack(top);
    ASSERT_TRUE(read.status().ok()) << read.status().message();
    EXPECT_EQ(plugins(read), (Names{"spank_pyxis.so@plugstack.conf.d/10-pyxis.conf:1",
                                    "chroot.so@plugstack.conf.d/20-chroot.conf:2"}));
    EXPECT_EQ(read.plugins[1].args, Names{"jail=/mnt/jail"});
    EXPECT_EQ(read.files.size(), 3U);
}

TEST_F(PlugstackFiles, IncludesAreReadInPlaceSortedAndRelativeToTheirFile) {
    const auto top = write("plugstack.conf", "required a.so\ninclude d/*.conf\nrequired z.so\n");
    write("d/2.conf", "required d2.so\n");
    write("d/1.conf", "required d1.so\ninclude sub/x.conf\n");
    write("d/sub/x.conf", "required x.so\n");
    write("d/ignored.txt", "required never.so\n");
    const auto read = read_plugstack(top);
    ASSERT_TRUE(read.status().ok()) << read.status().message();
    EXPECT_EQ(plugins(read),
              (Names{"a.so@plugstack.conf:1", "d1.so@d/1.conf:1", "x.so@d/sub/x.conf:1",
                     "d2.so@d/2.conf:1", "z.so@plugstack.conf:3"}));
}

TEST_F(PlugstackFiles, APatternThatMatchesNothingAddsNothing) {
    const auto top = write("plugstack.conf", "include nothing/*\nrequired chroot.so jail=/j\n");
    const auto read = read_plugstack(top);
    ASSERT_TRUE(read.status().ok()) << read.status().message();
    EXPECT_EQ(plugins(read), Names{"chroot.so@plugstack.conf:2"});
    ASSERT_EQ(read.empty_includes.size(), 1U);
    EXPECT_NE(read.empty_includes[0].find("plugstack.conf:1: include " + dir_ + "/nothing/*"),
              std::string::npos);
}

TEST_F(PlugstackFiles, ADirectoryOrDanglingLinkMatchedIsReadAsEmpty) {
    const auto top = write("plugstack.conf", "include d/*\n");
    write("d/sub/x.conf", "required x.so\n");
    write("d/y.conf", "required y.so\n");
    fs::create_symlink(dir_ + "/gone.conf", dir_ + "/d/z.conf");
    const auto read = read_plugstack(top);
    ASSERT_TRUE(read.status().ok()) << read.status().message();
    EXPECT_EQ(plugins(read), Names{"y.so@d/y.conf:1"});
    ASSERT_EQ(read.notes.size(), 2U);
    EXPECT_NE(read.notes[0].cause.find("is a directory"), std::string::npos);
    EXPECT_NE(read.notes[1].cause.find("does not exist"), std::string::npos);
}

TEST_F(PlugstackFiles, AnIncludeLoopIsAnError) {
    const auto top = write("plugstack.conf", "include a.conf\n");
    write("a.conf", "include b.conf\n");
    write("b.conf", "include plugstack.conf\n");
    const auto read = read_plugstack(top);
    ASSERT_FALSE(read.status().ok());
    EXPECT_NE(read.cause.find("b.conf:1: an include loop: " + top + " -> " + dir_ + "/a.conf -> " +
                              dir_ + "/b.conf -> " + top),
              std::string::npos)
        << read.cause;
    EXPECT_EQ(read.fix, "remove the include line that leads back to " + top);
}

TEST_F(PlugstackFiles, IncludesNestAtMostEightDeep) {
    const auto top = write("plugstack.conf", "include 1.conf\n");
    for (int i = 1; i < kPlugstackMaxDepth; ++i) {
        write(std::to_string(i) + ".conf", "include " + std::to_string(i + 1) + ".conf\n");
    }
    write(std::to_string(kPlugstackMaxDepth) + ".conf", "required chroot.so jail=/j\n");
    auto read = read_plugstack(top);
    EXPECT_FALSE(read.status().ok());
    EXPECT_NE(read.cause.find("nest more than 8 files deep"), std::string::npos) << read.cause;
    // One level less is fine.
    write("plugstack.conf", "include 2.conf\n");
    read = read_plugstack(top);
    ASSERT_TRUE(read.status().ok()) << read.status().message();
    EXPECT_EQ(plugins(read), Names{"chroot.so@8.conf:1"});
}

TEST_F(PlugstackFiles, FilesMustBeRootsAlone) {
    const auto top = write("plugstack.conf", "include d/*\n");
    const auto other = write("d/chroot.conf", "required chroot.so jail=/j\n");
    ASSERT_EQ(::chown(other.c_str(), 5301, 5301), 0);
    auto read = read_plugstack(top);
    ASSERT_FALSE(read.status().ok());
    EXPECT_EQ(read.cause, other + " (included by " + top +
                              ":1) is owned by uid 5301; plugstack.conf and the files it "
                              "includes must be owned by root and not writable by group or "
                              "others");
    EXPECT_EQ(read.fix, "chown root: " + other + "; chmod go-w " + other);
    ASSERT_EQ(::chown(other.c_str(), 0, 0), 0);
    ASSERT_EQ(::chmod(other.c_str(), 0664), 0);
    read = read_plugstack(top);
    EXPECT_NE(read.cause.find("is writable by group or others"), std::string::npos) << read.cause;
}

TEST_F(PlugstackFiles, NoSymlinkInADirectoryUsersCanWrite) {
    const auto top = write("plugstack.conf", "include " + dir_ + "/open/*\n");
    const auto real = write("real.conf", "required chroot.so jail=/j\n");
    fs::create_directories(dir_ + "/open");
    ASSERT_EQ(::chmod((dir_ + "/open").c_str(), 01777), 0);
    fs::create_symlink(real, dir_ + "/open/chroot.conf");
    const auto read = read_plugstack(top);
    ASSERT_FALSE(read.status().ok());
    EXPECT_NE(read.cause.find("cannot read " + dir_ + "/open/chroot.conf (included by"),
              std::string::npos)
        << read.cause;
}

TEST_F(PlugstackFiles, AMissingPlugstackConfNamesTheFix) {
    const auto read = read_plugstack(dir_ + "/plugstack.conf");
    ASSERT_FALSE(read.status().ok());
    EXPECT_EQ(read.cause.rfind("cannot read " + dir_ + "/plugstack.conf: ", 0), 0U) << read.cause;
    EXPECT_NE(read.fix.find("required chroot.so jail=DIR"), std::string::npos);
    EXPECT_TRUE(read.files.empty());
}

} // namespace
} // namespace sjail
