// SPDX-License-Identifier: Apache-2.0
// Root-level: build the node namespace for real, enter it, look around.
#include "sandbox.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/node_namespace.hpp"

#include <fcntl.h>
#include <functional>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using kit::in_child;
using sjail::Config;
using sjail::Fd;

namespace {

// Builds the node namespace and moves the calling process into it, as a step does.
std::string enter_jail(const Config &config) {
    if (auto s = sjail::enter_node_jail(config); !s.ok()) {
        return "enter: " + s.message();
    }
    return "";
}

ino_t inode_of(const std::string &path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// The node namespace's inode. `keep` holds the namespace open, so that its
// inode number cannot be reused by a namespace built later.
ino_t ns_inode(const Config &config, Fd &keep) {
    sjail::NodeNamespace node;
    if (!sjail::acquire_node_namespace(config, node).ok()) {
        return 0;
    }
    keep = std::move(node.fd);
    struct stat st {};
    return ::fstat(keep.get(), &st) == 0 ? st.st_ino : 0;
}

// Runs `check` in a child that has a fresh sandbox node (see sandbox.hpp).
std::string on_node(const std::function<std::string(Config &)> &check) {
    return in_child([&] {
        Config config;
        if (auto e = sandbox::make_node(config); !e.empty()) {
            return e;
        }
        return check(config);
    });
}

// Same, with the child already moved into the node's jail namespace.
std::string in_jail(const std::function<std::string(Config &)> &check) {
    return on_node([&](Config &config) {
        if (auto e = enter_jail(config); !e.empty()) {
            return e;
        }
        return check(config);
    });
}

} // namespace

TEST(JailView, TheJailIsRootAndTheHostIsGone) {
    EXPECT_EQ(in_jail([](Config &) {
                  CHILD_EXPECT(kit::read_file("/etc/slurm-jail-release") == "JAIL");
                  CHILD_EXPECT(::access("/mnt/host-only", F_OK) != 0);
                  CHILD_EXPECT(::access("/mnt/jail", F_OK) != 0);
                  char cwd[256];
                  CHILD_EXPECT(::getcwd(cwd, sizeof(cwd)) != nullptr && std::string(cwd) == "/");
                  // ".." at the root stays at the root.
                  CHILD_EXPECT(inode_of("/..") == inode_of("/"));
                  return std::string();
              }),
              "");
}

TEST(JailView, ProcIsFreshAndNosuidNodevNoexec) {
    EXPECT_EQ(
        in_jail([](Config &) {
            struct statvfs vfs {};
            CHILD_EXPECT(::statvfs("/proc", &vfs) == 0);
            CHILD_EXPECT((vfs.f_flag & ST_NOSUID) != 0);
            CHILD_EXPECT((vfs.f_flag & ST_NODEV) != 0);
            CHILD_EXPECT((vfs.f_flag & ST_NOEXEC) != 0);
            CHILD_EXPECT(
                std::to_string(::getpid()) ==
                kit::read_file("/proc/self/stat").substr(0, std::to_string(::getpid()).size()));
            return std::string();
        }),
        "");
}

TEST(JailView, DevSysTmpAndNodeBindsAreThere) {
    EXPECT_EQ(in_jail([](Config &) {
                  CHILD_EXPECT(kit::write_file("/dev/null", "x").empty());
                  struct stat st {};
                  CHILD_EXPECT(::stat("/dev/pts", &st) == 0 && S_ISDIR(st.st_mode));
                  CHILD_EXPECT(::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode));
                  CHILD_EXPECT(::stat("/sys/kernel", &st) == 0);
                  // /tmp is the node-local directory, sticky and writable, nosuid.
                  CHILD_EXPECT(kit::write_file("/tmp/from-job", "tmp").empty());
                  CHILD_EXPECT(::stat("/tmp", &st) == 0 && (st.st_mode & 07777) == 01777);
                  struct statvfs vfs {};
                  CHILD_EXPECT(::statvfs("/tmp", &vfs) == 0 && (vfs.f_flag & ST_NOSUID) != 0);
                  // Slurm config is read-only; munge and spool are writable.
                  CHILD_EXPECT(kit::read_file("/mnt/node/conf/slurm.conf") == "ClusterName=test\n");
                  CHILD_EXPECT(::open("/mnt/node/conf/new", O_CREAT | O_WRONLY, 0600) < 0 &&
                               errno == EROFS);
                  CHILD_EXPECT(kit::write_file("/mnt/node/munge/sock", "s").empty());
                  CHILD_EXPECT(kit::write_file("/mnt/node/spool/job1", "s").empty());
                  // Admin bind, read-only as asked.
                  CHILD_EXPECT(kit::read_file("/opt/data/hello") == "hi");
                  CHILD_EXPECT(::open("/opt/data/new", O_CREAT | O_WRONLY, 0600) < 0 &&
                               errno == EROFS);
                  return std::string();
              }),
              "");
}

TEST(JailView, TmpIsTheNodeDirectory) {
    EXPECT_EQ(on_node([](Config &config) {
                  const std::string out = in_child([&] {
                      if (auto e = enter_jail(config); !e.empty()) {
                          return e;
                      }
                      return kit::write_file("/tmp/from-job", "tmp");
                  });
                  CHILD_EXPECT(out.empty());
                  CHILD_EXPECT(kit::read_file("/mnt/node/tmp/from-job") == "tmp");
                  CHILD_EXPECT(::access("/mnt/jail/tmp/from-job", F_OK) != 0);
                  return std::string();
              }),
              "");
}

TEST(JailView, NamespaceIsReusedUntilTheConfigChanges) {
    EXPECT_EQ(on_node([](Config &config) {
                  Fd keep_first;
                  const ino_t first = ns_inode(config, keep_first);
                  CHILD_EXPECT(first != 0);
                  Fd again;
                  CHILD_EXPECT(ns_inode(config, again) == first);
                  config.binds.push_back({"/mnt/node/data", "/home", true});
                  Fd keep_second;
                  const ino_t second = ns_inode(config, keep_second);
                  CHILD_EXPECT(second != 0 && second != first);
                  CHILD_EXPECT(ns_inode(config, again) == second);
                  return std::string();
              }),
              "");
}

TEST(JailView, LostNamespaceIsRebuilt) {
    EXPECT_EQ(on_node([](Config &config) {
                  Fd keep_first;
                  const ino_t first = ns_inode(config, keep_first);
                  CHILD_EXPECT(first != 0);
                  CHILD_EXPECT(::umount2("/mnt/state/ns", MNT_DETACH) == 0);
                  Fd keep_second;
                  const ino_t second = ns_inode(config, keep_second);
                  CHILD_EXPECT(second != 0 && second != first);
                  return std::string();
              }),
              "");
}

TEST(JailView, MissingOrReplacedJailIsNoticed) {
    EXPECT_EQ(on_node([](Config &config) {
                  Fd keep_first;
                  const ino_t first = ns_inode(config, keep_first);
                  CHILD_EXPECT(first != 0);
                  // Gone: fail closed, even though the old namespace still exists.
                  CHILD_EXPECT(::rename("/mnt/jail", "/mnt/old-jail") == 0);
                  sjail::NodeNamespace ns;
                  auto s = sjail::acquire_node_namespace(config, ns);
                  CHILD_EXPECT(!s.ok() && !ns.fd.valid());
                  CHILD_EXPECT(s.message().find("No such file or directory") != std::string::npos);
                  // Replaced by a new directory (a re-populated jail): rebuilt.
                  Config again;
                  CHILD_EXPECT(sandbox::make_layout("/mnt", again).empty());
                  Fd keep_second;
                  const ino_t second = ns_inode(config, keep_second);
                  CHILD_EXPECT(second != 0 && second != first);
                  return std::string();
              }),
              "");
}

TEST(JailView, TasksForkedAfterEntryAreInTheJail) {
    EXPECT_EQ(in_jail([](Config &) {
                  ino_t step_ns = 0;
                  CHILD_EXPECT(sjail::current_mount_namespace(step_ns).ok());
                  const std::string task = in_child([&] {
                      ino_t task_ns = 0;
                      CHILD_EXPECT(sjail::current_mount_namespace(task_ns).ok());
                      CHILD_EXPECT(task_ns == step_ns);
                      CHILD_EXPECT(kit::read_file("/etc/slurm-jail-release") == "JAIL");
                      return std::string();
                  });
                  CHILD_EXPECT(task.empty());
                  return std::string();
              }),
              "");
}

// slurmstepd has threads already when the step is prepared; setns must still work.
TEST(JailView, EntersFromAMultithreadedProcess) {
    EXPECT_EQ(on_node([](Config &config) {
                  sjail::NodeNamespace ns;
                  if (auto s = sjail::acquire_node_namespace(config, ns); !s.ok()) {
                      return s.message();
                  }
                  int stop[2];
                  CHILD_EXPECT(::pipe(stop) == 0);
                  std::thread other([&] {
                      char c = 0;
                      (void)!::read(stop[0], &c, 1);
                  });
                  const auto s = sjail::enter_namespace(ns.fd.get());
                  const bool in_jail = kit::read_file("/etc/slurm-jail-release") == "JAIL";
                  ::close(stop[1]);
                  other.join();
                  CHILD_EXPECT(s.ok());
                  CHILD_EXPECT(in_jail);
                  return std::string();
              }),
              "");
}

// Revoking access by unmounting a bind source reaches the next step.
TEST(JailView, UnmountedBindSourceIsNoticed) {
    EXPECT_EQ(on_node([](Config &config) {
                  CHILD_EXPECT(::mount("secret", "/mnt/node/data", "tmpfs", 0, nullptr) == 0);
                  CHILD_EXPECT(kit::write_file("/mnt/node/data/secret", "s").empty());
                  const auto before = in_child([&] {
                      if (auto e = enter_jail(config); !e.empty()) {
                          return e;
                      }
                      CHILD_EXPECT(::access("/opt/data/secret", F_OK) == 0);
                      return std::string();
                  });
                  CHILD_EXPECT(before.empty());
                  CHILD_EXPECT(::umount2("/mnt/node/data", 0) == 0);
                  const auto after = in_child([&] {
                      if (auto e = enter_jail(config); !e.empty()) {
                          return e;
                      }
                      CHILD_EXPECT(::access("/opt/data/secret", F_OK) != 0);
                      CHILD_EXPECT(kit::read_file("/opt/data/hello") == "hi");
                      return std::string();
                  });
                  CHILD_EXPECT(after.empty());
                  return std::string();
              }),
              "");
}

// Tools replace /etc/resolv.conf by writing a new file and renaming it over
// the old one; a bind of the old file would keep showing the old content.
TEST(JailView, ResolvConfReplacedByRenameIsNoticed) {
    EXPECT_EQ(
        on_node([](Config &config) {
            // The node's own /etc, private to this test.
            CHILD_EXPECT(::mount("etc", "/etc", "tmpfs", 0, "mode=0755") == 0);
            CHILD_EXPECT(kit::write_file("/etc/hosts", "127.0.0.1 localhost\n").empty());
            CHILD_EXPECT(kit::write_file("/etc/resolv.conf", "nameserver 10.0.0.1\n").empty());
            auto seen = [&] {
                return in_child([&] {
                    if (auto e = enter_jail(config); !e.empty()) {
                        return e;
                    }
                    return kit::read_file("/etc/resolv.conf");
                });
            };
            CHILD_EXPECT(seen() == "nameserver 10.0.0.1\n");
            CHILD_EXPECT(kit::write_file("/etc/resolv.conf.new", "nameserver 10.0.0.2\n").empty());
            CHILD_EXPECT(::rename("/etc/resolv.conf.new", "/etc/resolv.conf") == 0);
            CHILD_EXPECT(seen() == "nameserver 10.0.0.2\n");
            return std::string();
        }),
        "");
}

// sshd makes itself non-dumpable, and root in a container's user namespace
// has no CAP_SYS_PTRACE: the namespace is still built and kept (its builder
// lets the parent read /proc/PID/ns of it).
TEST(JailView, ANonDumpableCallerWithoutPtraceStillBuildsTheNamespace) {
    EXPECT_EQ(on_node([](Config &config) {
                  CHILD_EXPECT(::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0);
                  CHILD_EXPECT(::prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) == 0);
                  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
                  __user_cap_data_struct data[2]{};
                  CHILD_EXPECT(::syscall(SYS_capget, &header, data) == 0);
                  data[0].effective &= ~(1U << CAP_SYS_PTRACE);
                  data[0].permitted &= ~(1U << CAP_SYS_PTRACE);
                  data[0].inheritable &= ~(1U << CAP_SYS_PTRACE);
                  CHILD_EXPECT(::syscall(SYS_capset, &header, data) == 0);
                  Fd keep;
                  CHILD_EXPECT(ns_inode(config, keep) != 0);
                  return std::string();
              }),
              "");
}
