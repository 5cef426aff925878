// SPDX-License-Identifier: Apache-2.0
#include "failure_state_file.hpp"
#include "test_util.hpp"

#include <fstream>

namespace sjh {
namespace {

TEST(FailureStateFile, RoundTripThroughTheFile) {
    test::TempDir dir;
    const auto path = (dir.path() / "gpu.failures").string();
    EXPECT_EQ(read_failure_count(path, "gpu"), 0U); // missing file
    write_failure_count(path, "gpu", 3);
    EXPECT_EQ(read_failure_count(path, "gpu"), 3U);
    write_failure_count(path, "gpu", 0);
    EXPECT_EQ(read_failure_count(path, "gpu"), 0U);
    // Only the target remains: the temp file was renamed over it.
    std::size_t files = 0;
    for ([[maybe_unused]] const auto &e : std::filesystem::directory_iterator(dir.path())) {
        ++files;
    }
    EXPECT_EQ(files, 1U);
}

TEST(FailureStateFile, ACrashMidWriteLeavesTheOldFileIntact) {
    test::TempDir dir;
    const auto path = (dir.path() / "gpu.failures").string();
    write_failure_count(path, "gpu", 2);
    // What a crash between create and rename leaves behind: a partial temp file.
    std::ofstream(dir.path() / ".gpu.failures.tmp.99999") << "{\"check\": \"gp";
    EXPECT_EQ(read_failure_count(path, "gpu"), 2U);
    write_failure_count(path, "gpu", 3);
    EXPECT_EQ(read_failure_count(path, "gpu"), 3U);
}

TEST(FailureStateFile, CorruptFileIsAClearError) {
    test::TempDir dir;
    const auto path = (dir.path() / "gpu.failures").string();
    std::ofstream(path) << "garbage";
    try {
        read_failure_count(path, "gpu");
        FAIL() << "no error for a corrupt state file";
    } catch (const std::runtime_error &e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(path), std::string::npos) << msg;
        EXPECT_NE(msg.find("delete it"), std::string::npos) << msg;
    }
    EXPECT_TRUE(std::filesystem::exists(path)); // never deleted for the user
    std::ofstream(path, std::ios::trunc) << R"({"check":"nccl","consecutive_failures":1})";
    EXPECT_THROW(read_failure_count(path, "gpu"), std::runtime_error);
}

} // namespace
} // namespace sjh
