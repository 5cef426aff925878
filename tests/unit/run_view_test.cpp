// SPDX-License-Identifier: Apache-2.0
// Root-level: run=node gives the jail view a /run of the node's own (a fresh
// tmpfs), so nothing a user plants in the shared jail's /run redirects a
// bind, and the jail needs no mount points below /run; run=jail keeps the
// jail's own /run with its old rules.
#include "sandbox.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/node_namespace.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <grp.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <set>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

using kit::in_child;
using sjail::Config;

namespace {

const std::string kJailRun = "/mnt/jail/run";

// The sandbox node (sandbox.hpp), with the node's munge directory at
// /run/munge as on a real node (a tmpfs on this child's own /run).
std::string make_node_with_run_munge(Config &config) {
    if (auto e = sandbox::make_node(config); !e.empty()) {
        return e;
    }
    if (::mount("run", "/run", "tmpfs", 0, "mode=0755") != 0) {
        return kit::errno_text("mount tmpfs on /run");
    }
    if (auto e = kit::mkdir_p("/run/munge", 0755); !e.empty()) {
        return e;
    }
    config.munge_dir = "/run/munge";
    return kit::write_file("/run/munge/munge.socket.2", "node-munge");
}

std::string symlink_at(const std::string &target, const std::string &path) {
    std::filesystem::remove_all(path);
    return ::symlink(target.c_str(), path.c_str()) == 0 ? "" : kit::errno_text("symlink " + path);
}

std::string link_of(const std::string &path) {
    std::error_code ec;
    return std::filesystem::read_symlink(path, ec).string();
}

std::set<std::string> names_in(const std::string &dir) {
    std::set<std::string> names;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(dir, ec)) {
        names.insert(entry.path().filename().string());
    }
    return names;
}

// Runs `fn` as `uid` in a forked child; its result is the exit code (0: fine).
int as_user(uid_t uid, const std::function<bool()> &fn) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        const bool ok =
            ::setgroups(0, nullptr) == 0 && ::setgid(uid) == 0 && ::setuid(uid) == 0 && fn();
        ::_exit(ok ? 0 : 1);
    }
    int status = 0;
    return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status)
                                                                             : -1;
}

// Builds the node namespace; "" when accepted, else the refusal. Nothing may
// be mounted on the node's own view, in the shared jail or over /etc.
std::string build(const Config &config) {
    // A node in a container has mounts below /etc of its own (hosts,
    // resolv.conf, hostname): only new ones are a leak.
    const auto etc_mounts = kit::mounts_below("/etc");
    sjail::NodeNamespace ns;
    const auto s = sjail::acquire_node_namespace(config, ns);
    if (!kit::mounts_below("/mnt/jail").empty() || kit::mounts_below("/etc") != etc_mounts) {
        return "a mount leaked into the node's view";
    }
    return s.ok() ? "" : "refused: " + s.message();
}

} // namespace

TEST(NodeRun, RunIsAFreshTmpfsOfTheNodeHidingTheJailsOwn) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = sandbox::make_node(config); !e.empty()) {
                      return e;
                  }
                  CHILD_EXPECT(kit::write_file(kJailRun + "/from-jail", "shared").empty());
                  CHILD_EXPECT(sjail::enter_node_jail(config).ok());
                  struct statfs fs {};
                  CHILD_EXPECT(::statfs("/run", &fs) == 0 && fs.f_type == TMPFS_MAGIC);
                  struct stat st {};
                  CHILD_EXPECT(::stat("/run", &st) == 0 && st.st_uid == 0 && st.st_gid == 0 &&
                               (st.st_mode & 07777) == 0755);
                  struct statvfs vfs {};
                  CHILD_EXPECT(::statvfs("/run", &vfs) == 0);
                  CHILD_EXPECT((vfs.f_flag & ST_NOSUID) != 0 && (vfs.f_flag & ST_NODEV) != 0);
                  CHILD_EXPECT(vfs.f_blocks * vfs.f_frsize == 16U * 1024 * 1024);
                  // Debian's skeleton and nothing of the shared jail's /run.
                  CHILD_EXPECT(names_in("/run") == std::set<std::string>{"lock"});
                  CHILD_EXPECT(::lstat("/run/lock", &st) == 0 && S_ISDIR(st.st_mode) &&
                               st.st_uid == 0 && (st.st_mode & 07777) == 01777);
                  return std::string();
              }),
              "");
}

TEST(NodeRun, MountPointsBelowRunAreMadeInTheNodesRunNotInTheJail) {
    EXPECT_EQ(
        in_child([] {
            Config config;
            if (auto e = make_node_with_run_munge(config); !e.empty()) {
                return e;
            }
            config.binds.push_back({"/mnt/node/data/hello", "/run/site/hello", true});
            CHILD_EXPECT(!std::filesystem::exists(kJailRun + "/munge"));
            CHILD_EXPECT(build(config).empty());
            // The shared jail's /run got nothing.
            CHILD_EXPECT(names_in(kJailRun).empty());
            CHILD_EXPECT(sjail::enter_node_jail(config).ok());
            CHILD_EXPECT(kit::read_file("/run/munge/munge.socket.2") == "node-munge");
            CHILD_EXPECT(kit::read_file("/run/site/hello") == "hi");
            struct stat st {};
            CHILD_EXPECT(::stat("/run/site", &st) == 0 && st.st_uid == 0 &&
                         (st.st_mode & 07777) == 0755);
            CHILD_EXPECT(names_in("/run") == (std::set<std::string>{"lock", "munge", "site"}));
            return std::string();
        }),
        "");
}

TEST(NodeRun, UsersWriteOnlyInTheStickyLockDirectory) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_node_with_run_munge(config); !e.empty()) {
                      return e;
                  }
                  CHILD_EXPECT(sjail::enter_node_jail(config).ok());
                  CHILD_EXPECT(as_user(1000, [] {
                                   return ::mkdir("/run/mine", 0755) != 0 && errno == EACCES &&
                                          ::open("/run/mine", O_CREAT | O_WRONLY, 0600) < 0 &&
                                          errno == EACCES && ::chmod("/run", 0777) != 0 &&
                                          ::mkdir("/run/munge/mine", 0755) != 0 &&
                                          kit::write_file("/run/lock/mine.lock", "1").empty();
                               }) == 0);
                  // The sticky bit keeps another user from removing it.
                  CHILD_EXPECT(as_user(1001, [] {
                                   return ::unlink("/run/lock/mine.lock") != 0 && errno == EPERM;
                               }) == 0);
                  CHILD_EXPECT(kit::read_file("/run/lock/mine.lock") == "1");
                  return std::string();
              }),
              "");
}

TEST(NodeRunAttack, SymlinksPlantedInTheJailsRunRedirectNothing) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_node_with_run_munge(config); !e.empty()) {
                      return e;
                  }
                  config.binds.push_back({"/mnt/node/data", "/run/site", true});
                  for (const auto &name : {"munge", "lock", "site"}) {
                      CHILD_EXPECT(symlink_at("/etc", kJailRun + "/" + name).empty());
                  }
                  CHILD_EXPECT(::lchown((kJailRun + "/munge").c_str(), 1000, 1000) == 0);
                  CHILD_EXPECT(build(config).empty());
                  // The plants are as they were; nothing went through them.
                  for (const auto &name : {"munge", "lock", "site"}) {
                      CHILD_EXPECT(link_of(kJailRun + "/" + name) == "/etc");
                  }
                  CHILD_EXPECT(sjail::enter_node_jail(config).ok());
                  struct stat st {};
                  CHILD_EXPECT(::lstat("/run/munge", &st) == 0 && S_ISDIR(st.st_mode));
                  CHILD_EXPECT(kit::read_file("/run/munge/munge.socket.2") == "node-munge");
                  CHILD_EXPECT(::lstat("/run/lock", &st) == 0 && S_ISDIR(st.st_mode) &&
                               st.st_uid == 0 && (st.st_mode & 07777) == 01777);
                  CHILD_EXPECT(::lstat("/run/site", &st) == 0 && S_ISDIR(st.st_mode));
                  CHILD_EXPECT(kit::read_file("/run/site/hello") == "hi");
                  return std::string();
              }),
              "");
}

TEST(NodeRunAttack, FilesAndUserDirectoriesPlantedInTheJailsRunAreHidden) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_node_with_run_munge(config); !e.empty()) {
                      return e;
                  }
                  CHILD_EXPECT(kit::write_file(kJailRun + "/munge", "planted").empty());
                  CHILD_EXPECT(kit::mkdir_p(kJailRun + "/lock/evil", 0777).empty());
                  CHILD_EXPECT(::chown((kJailRun + "/lock").c_str(), 1000, 1000) == 0);
                  CHILD_EXPECT(::chmod(kJailRun.c_str(), 0777) == 0);
                  CHILD_EXPECT(build(config).empty());
                  CHILD_EXPECT(kit::read_file(kJailRun + "/munge") == "planted");
                  CHILD_EXPECT(sjail::enter_node_jail(config).ok());
                  CHILD_EXPECT(kit::read_file("/run/munge/munge.socket.2") == "node-munge");
                  struct stat st {};
                  CHILD_EXPECT(::stat("/run/lock", &st) == 0 && st.st_uid == 0);
                  CHILD_EXPECT(::access("/run/lock/evil", F_OK) != 0);
                  return std::string();
              }),
              "");
}

TEST(NodeRunAttack, NoMountPointIsMadeInsideABindBelowRun) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_node_with_run_munge(config); !e.empty()) {
                      return e;
                  }
                  // A directory a user owns, bound below /run, and a bind below that.
                  CHILD_EXPECT(kit::mkdir_p("/mnt/node/user", 0755).empty());
                  CHILD_EXPECT(::chown("/mnt/node/user", 1000, 1000) == 0);
                  config.binds.push_back({"/mnt/node/user", "/run/user-dir", false});
                  config.binds.push_back({"/mnt/node/data", "/run/user-dir/data", true});
                  const std::string result = build(config);
                  CHILD_EXPECT(result.find("refused: ") == 0);
                  CHILD_EXPECT(result.find("refusing to mount /run/user-dir/data through a path "
                                           "users control") != std::string::npos);
                  CHILD_EXPECT(names_in("/mnt/node/user").empty());
                  return std::string();
              }),
              "");
}

TEST(RunJail, TheJailsOwnRunNeedsItsMountPoints) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_node_with_run_munge(config); !e.empty()) {
                      return e;
                  }
                  config.run = sjail::RunMode::Jail;
                  const std::string missing = build(config);
                  CHILD_EXPECT(missing.find("mount point /run/munge is missing inside the jail") !=
                               std::string::npos);
                  CHILD_EXPECT(!std::filesystem::exists(kJailRun + "/munge"));
                  CHILD_EXPECT(kit::mkdir_p(kJailRun + "/munge", 0755).empty());
                  CHILD_EXPECT(kit::write_file(kJailRun + "/from-jail", "shared").empty());
                  CHILD_EXPECT(sjail::enter_node_jail(config).ok());
                  CHILD_EXPECT(kit::read_file("/run/from-jail") == "shared");
                  CHILD_EXPECT(kit::read_file("/run/munge/munge.socket.2") == "node-munge");
                  return std::string();
              }),
              "");
}

TEST(RunJailAttack, SymlinkAtTheJailsRunMungeIsRefused) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_node_with_run_munge(config); !e.empty()) {
                      return e;
                  }
                  config.run = sjail::RunMode::Jail;
                  CHILD_EXPECT(symlink_at("/etc", kJailRun + "/munge").empty());
                  const std::string result = build(config);
                  CHILD_EXPECT(result.find("refused: ") == 0);
                  CHILD_EXPECT(result.find("jail path /run/munge is a symlink") !=
                               std::string::npos);
                  return std::string();
              }),
              "");
}
