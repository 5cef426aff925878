// SPDX-License-Identifier: Apache-2.0
// The one atomic writer (sjail/sys/small_file.hpp), used by the plugin's
// state files and by the GPU health checks' counters and metrics.
#include "kit/files.hpp"
#include "kit/temp_dir.hpp"
#include "sjail/sys/small_file.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sjail {
namespace {

namespace fs = std::filesystem;

TEST(AtomicFile, ReplacesTheContentsWithTheGivenMode) {
    kit::TempDir dir;
    const auto path = (dir.path() / "gpu.prom").string();
    ASSERT_TRUE(write_file_atomically(path, "one\n", 0644).ok());
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644U);
    ASSERT_TRUE(write_file_atomically(path, "two\n").ok());
    EXPECT_EQ(kit::read_file(path), "two\n");
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600U); // the default: private to root
    std::size_t files = 0;
    for ([[maybe_unused]] const auto &e : fs::directory_iterator(dir.path())) {
        ++files;
    }
    EXPECT_EQ(files, 1U); // no temp file left behind
}

TEST(AtomicFile, PlantedSymlinksAreNeverFollowed) {
    // Links at the temp names a writer could guess, and at the target itself.
    kit::TempDir dir;
    const auto victim = dir.path() / "victim";
    std::ofstream(victim) << "precious\n";
    for (const auto pid : {::getpid(), ::getpid() + 1}) {
        fs::create_symlink(victim, dir.path() / (".state.tmp." + std::to_string(pid)));
    }
    fs::create_symlink(victim, dir.path() / "state.tmp");
    const auto target = dir.path() / "state";
    fs::create_symlink(victim, target);
    ASSERT_TRUE(write_file_atomically(target, "counter\n").ok());
    EXPECT_EQ(kit::read_file(victim), "precious\n");
    EXPECT_FALSE(fs::is_symlink(target)); // the link was replaced, not written through
    EXPECT_EQ(kit::read_file(target), "counter\n");
}

TEST(AtomicFile, AMissingDirectoryIsNamedWithTheFix) {
    kit::TempDir dir;
    const auto path = (dir.path() / "none/state").string();
    const auto s = write_file_atomically(path, "x");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("to replace " + path + " (the directory must exist"),
              std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("No such file or directory"), std::string::npos) << s.message();
}

} // namespace
} // namespace sjail
