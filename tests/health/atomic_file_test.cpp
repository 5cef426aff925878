// SPDX-License-Identifier: Apache-2.0
#include "atomic_file.hpp"
#include "test_util.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace sjh {
namespace {

namespace fs = std::filesystem;

TEST(AtomicFile, ReplacesTheContentsWithTheGivenMode) {
    test::TempDir dir;
    const auto path = dir.path() / "gpu.prom";
    write_file_atomically(path, "one\n");
    write_file_atomically(path, "two\n", 0600);
    EXPECT_EQ(test::read_file(path), "two\n");
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600U);
    std::size_t files = 0;
    for ([[maybe_unused]] const auto &e : fs::directory_iterator(dir.path())) {
        ++files;
    }
    EXPECT_EQ(files, 1U); // no temp file left behind
}

TEST(AtomicFile, PlantedSymlinksAreNeverFollowed) {
    // Links at the temp names a writer could guess, and at the target itself.
    test::TempDir dir;
    const auto victim = dir.path() / "victim";
    std::ofstream(victim) << "precious\n";
    for (const auto pid : {::getpid(), ::getpid() + 1}) {
        fs::create_symlink(victim, dir.path() / (".state.tmp." + std::to_string(pid)));
    }
    const auto target = dir.path() / "state";
    fs::create_symlink(victim, target);
    write_file_atomically(target, "counter\n");
    EXPECT_EQ(test::read_file(victim), "precious\n");
    EXPECT_FALSE(fs::is_symlink(target)); // the link was replaced, not written through
    EXPECT_EQ(test::read_file(target), "counter\n");
}

} // namespace
} // namespace sjh
