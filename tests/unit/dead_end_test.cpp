// SPDX-License-Identifier: Apache-2.0
// Root-level: where a step's thread goes when it may not run.
#include "sandbox.hpp"
#include "sjail/sys/job/dead_end.hpp"

#include <algorithm>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using kit::in_child;

namespace {

std::vector<std::string> entries_of(const char *path) {
    std::vector<std::string> names;
    DIR *dir = ::opendir(path);
    if (dir == nullptr) {
        return names;
    }
    while (const dirent *e = ::readdir(dir)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") {
            names.push_back(name);
        }
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

// What the dead end holds besides /home: munge, /dev/null and the cgroup tree.
std::vector<std::string> furniture(bool with_home) {
    std::vector<std::string> names = {"dev", "etc", "run"};
    struct stat st {};
    if (::stat("/sys/fs/cgroup", &st) == 0) {
        names.emplace_back("sys");
    }
    if (with_home) {
        names.emplace_back("home");
    }
    std::sort(names.begin(), names.end());
    return names;
}

// In a private namespace: a node whose /home (a tmpfs) holds an executable,
// with a munge socket directory.
std::string make_node_with_home(mode_t home_mode) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0 ||
        ::mount("home", "/home", "tmpfs", 0, nullptr) != 0 || ::chmod("/home", home_mode) != 0 ||
        ::mount("run", "/run", "tmpfs", 0, "mode=0755") != 0 || ::mkdir("/run/munge", 0755) != 0) {
        return "node setup failed";
    }
    if (auto e = kit::write_file("/run/munge/munge.socket.2", ""); !e.empty()) {
        return e;
    }
    if (auto e = kit::write_file("/home/run.sh", "#!/bin/sh\necho ran\n"); !e.empty()) {
        return e;
    }
    return ::chmod("/home/run.sh", 0755) == 0 ? "" : "chmod";
}

} // namespace

TEST(DeadEnd, NothingOfTheHostAndNothingRunsThere) {
    EXPECT_EQ(in_child([] {
                  if (auto e = make_node_with_home(0755); !e.empty()) {
                      return e;
                  }
                  struct stat host_root {};
                  CHILD_EXPECT(::stat("/", &host_root) == 0);
                  // slurmstepd has threads already; the others keep their view.
                  int go[2];
                  CHILD_EXPECT(::pipe(go) == 0);
                  bool other_kept_its_root = false;
                  std::thread other([&] {
                      char c = 0;
                      (void)!::read(go[0], &c, 1);
                      struct stat st {};
                      other_kept_its_root = ::stat("/", &st) == 0 &&
                                            st.st_ino == host_root.st_ino &&
                                            st.st_dev == host_root.st_dev;
                  });
                  const std::vector<std::string> expected = furniture(true);
                  const bool entered = sjail::enter_dead_end("/run/munge", nullptr);
                  const auto names = entries_of("/");
                  // What slurmstepd needs to end the step and report why; no /proc.
                  const bool has_munge = ::access("/run/munge/munge.socket.2", F_OK) == 0;
                  const auto dev = entries_of("/dev");
                  const bool null_works = kit::write_file("/dev/null", "x").empty();
                  const bool no_proc = ::access("/proc", F_OK) != 0;
                  const bool hosts_readable = !kit::read_file("/etc/hosts").empty();
                  const int hosts_rw = ::open("/etc/hosts", O_WRONLY);
                  const bool no_shell = ::access("/bin/sh", F_OK) != 0;
                  const int in_root = ::open("/x", O_CREAT | O_WRONLY, 0600);
                  const int root_errno = errno;
                  // The user's output file still lands in their home...
                  const bool output_written = kit::write_file("/home/out", "error").empty();
                  // ...but nothing there can be executed.
                  char *argv[] = {const_cast<char *>("/home/run.sh"), nullptr};
                  ::execv("/home/run.sh", argv);
                  const int exec_errno = errno;
                  (void)!::write(go[1], "x", 1);
                  other.join();
                  CHILD_EXPECT(entered);
                  CHILD_EXPECT(names == expected);
                  CHILD_EXPECT(has_munge);
                  CHILD_EXPECT(dev == std::vector<std::string>{"null"});
                  CHILD_EXPECT(null_works);
                  CHILD_EXPECT(no_proc);
                  CHILD_EXPECT(hosts_readable);
                  CHILD_EXPECT(hosts_rw < 0);
                  CHILD_EXPECT(no_shell);
                  CHILD_EXPECT(in_root < 0 && root_errno == EROFS);
                  CHILD_EXPECT(output_written);
                  CHILD_EXPECT(exec_errno == EACCES);
                  CHILD_EXPECT(other_kept_its_root);
                  return std::string();
              }),
              "");
}

// A /home that users could write into is not brought along.
TEST(DeadEnd, AnOpenHomeIsLeftOut) {
    EXPECT_EQ(in_child([] {
                  if (auto e = make_node_with_home(0777); !e.empty()) {
                      return e;
                  }
                  const std::vector<std::string> expected = furniture(false);
                  CHILD_EXPECT(sjail::enter_dead_end("/run/munge", nullptr));
                  CHILD_EXPECT(entries_of("/") == expected);
                  return std::string();
              }),
              "");
}

// In the node of make_node_with_home: a spool directory with mode `mode`
// holding a batch job's directory and script, as slurmd leaves them.
std::string make_spool(mode_t mode) {
    if (::mkdir("/run/spool", mode) != 0 || ::chmod("/run/spool", mode) != 0 ||
        ::mkdir("/run/spool/job00042", 0750) != 0) {
        return "spool setup failed";
    }
    if (auto e = kit::write_file("/run/spool/job00042/slurm_script", "#!/bin/sh\necho ran\n");
        !e.empty()) {
        return e;
    }
    return ::chmod("/run/spool/job00042/slurm_script", 0755) == 0 ? "" : "chmod";
}

// slurmstepd removes a refused batch step's script from the spool directory,
// which it finds in the dead end; the script cannot be executed there.
TEST(DeadEnd, TheSpoolIsThereToCleanUpNotToRun) {
    EXPECT_EQ(in_child([] {
                  if (auto e = make_node_with_home(0755); !e.empty()) {
                      return e;
                  }
                  if (auto e = make_spool(0755); !e.empty()) {
                      return e;
                  }
                  CHILD_EXPECT(sjail::enter_dead_end("/run/munge", "/run/spool"));
                  CHILD_EXPECT(entries_of("/run") == (std::vector<std::string>{"munge", "spool"}));
                  char *argv[] = {const_cast<char *>("/run/spool/job00042/slurm_script"), nullptr};
                  ::execv(argv[0], argv);
                  CHILD_EXPECT(errno == EACCES);
                  CHILD_EXPECT(::unlink("/run/spool/job00042/slurm_script") == 0);
                  CHILD_EXPECT(::rmdir("/run/spool/job00042") == 0);
                  return std::string();
              }),
              "");
}

// A spool directory that users could write is not brought along.
TEST(DeadEnd, AnOpenSpoolIsLeftOut) {
    EXPECT_EQ(in_child([] {
                  if (auto e = make_node_with_home(0755); !e.empty()) {
                      return e;
                  }
                  if (auto e = make_spool(0777); !e.empty()) {
                      return e;
                  }
                  CHILD_EXPECT(sjail::enter_dead_end("/run/munge", "/run/spool"));
                  CHILD_EXPECT(entries_of("/run") == std::vector<std::string>{"munge"});
                  return std::string();
              }),
              "");
}
