// SPDX-License-Identifier: Apache-2.0
// Removing a tree a user filled (sjail/sys/tree_remove.hpp), as the job's
// end removes its job_tmp= directory: any depth, closed modes, links not
// followed, and never more than a few file descriptors.
#include "kit/files.hpp"
#include "kit/temp_dir.hpp"
#include "sjail/sys/fd.hpp"
#include "sjail/sys/tree_remove.hpp"

#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sjail {
namespace {

namespace fs = std::filesystem;

// A chain of `depth` directories "d" below dir/name, a file at each level,
// made through fds (no path is longer than one name).
void make_deep_chain(const std::string &dir, const std::string &name, int depth) {
    ASSERT_EQ(::mkdir((dir + "/" + name).c_str(), 0755), 0);
    Fd at(::open((dir + "/" + name).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    for (int i = 0; i < depth; ++i) {
        ASSERT_TRUE(at.valid());
        Fd file(::openat(at.get(), "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        ASSERT_TRUE(file.valid());
        ASSERT_EQ(::mkdirat(at.get(), "d", 0755), 0);
        at = Fd(::openat(at.get(), "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    }
}

TEST(TreeRemove, AnyDepthGoesWithAFewFileDescriptors) {
    kit::TempDir dir;
    make_deep_chain(dir.path().string(), "job-1", 6000);
    // In a child limited to 48 open files: holding a descriptor per level
    // would run out (EMFILE) long before the bottom.
    const pid_t pid = ::fork();
    if (pid == 0) {
        const rlimit few{48, 48};
        Fd parent(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        const bool ok = ::setrlimit(RLIMIT_NOFILE, &few) == 0 && parent.valid() &&
                        remove_tree(parent.get(), "job-1").ok();
        ::_exit(ok ? 0 : 1);
    }
    int status = -1;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_FALSE(fs::exists(dir.path() / "job-1"));
}

TEST(TreeRemove, LinksAreRemovedNotFollowedAndClosedDirectoriesGo) {
    kit::TempDir dir;
    const fs::path top = dir.path() / "job-2";
    const fs::path outside = dir.path() / "keep";
    fs::create_directories(outside);
    kit::write_file((outside / "file").string(), "kept");
    fs::create_directories(top / "a" / "b");
    fs::create_directory_symlink(outside, top / "link-dir");
    fs::create_symlink(outside / "file", top / "a" / "link-file");
    kit::write_file((top / "a" / "b" / "f").string(), "x");
    ::chmod((top / "a" / "b").c_str(), 0);
    ::chmod((top / "a").c_str(), 0);
    Fd parent(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    const Status s = remove_tree(parent.get(), "job-2");
    if (::geteuid() == 0) { // root reads and enters closed directories
        EXPECT_TRUE(s.ok()) << s.message();
        EXPECT_FALSE(fs::exists(top));
    } else {
        EXPECT_FALSE(s.ok());
        EXPECT_NE(s.message().find("job-2/a"), std::string::npos) << s.message();
        ::chmod((top / "a").c_str(), 0755);
        ::chmod((top / "a" / "b").c_str(), 0755);
    }
    EXPECT_EQ(kit::read_file((outside / "file").string()), "kept");
    EXPECT_FALSE(fs::exists(top / "link-dir"));
}

TEST(TreeRemove, NothingThereIsFine) {
    kit::TempDir dir;
    Fd parent(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    EXPECT_TRUE(remove_tree(parent.get(), "job-3").ok());
}

} // namespace
} // namespace sjail
