// SPDX-License-Identifier: Apache-2.0
// Root-level: with slurmd's queues (the node watch) in place, a step after
// one that checked fully joins without the full check, and every change the
// full check would have seen still reaches the very next step: a bind source
// unmounted, mounted over or replaced by rename, other settings, a step in
// another mount namespace, queues that are gone, recheck=0.
#include "sandbox.hpp"
#include "sjail/core/node/node_watch.hpp"
#include "sjail/sys/job/job_namespace.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/node_namespace.hpp"
#include "sjail/sys/node/node_watch.hpp"
#include "sjail/sys/small_file.hpp"

#include <cstdio>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

using kit::in_child;
using sjail::Config;

namespace {

// One step's node-namespace acquisition, in a child: "watched", "checked",
// or the error. With `read`, the step enters and reads that file in the jail.
std::string step(const Config &config, const std::string &read = "",
                 std::string *content = nullptr) {
    std::string out = in_child([&] {
        sjail::NodeNamespace node;
        if (auto s = sjail::acquire_node_namespace(config, node); !s.ok()) {
            return "error: " + s.message();
        }
        std::string how = node.watched ? "watched" : "checked";
        if (!read.empty()) {
            if (auto s = sjail::enter_namespace(node.fd.get()); !s.ok()) {
                return "error: " + s.message();
            }
            how += ' ';
            how += kit::read_file(read);
        }
        return "=" + how;
    });
    if (!out.starts_with("=")) {
        return out;
    }
    const std::size_t space = out.find(' ');
    if (content != nullptr) {
        *content = space == std::string::npos ? "" : out.substr(space + 1);
    }
    return out.substr(1, space == std::string::npos ? std::string::npos : space - 1);
}

// A sandbox node (sandbox.hpp) whose /etc is its own copy. The plan binds
// the node's /etc/hosts and /etc/resolv.conf, so the watch sees every entry
// made or removed in /etc: a user that another suite's cluster adds on this
// host meanwhile would disarm it, and a test that expects the next step to
// be watched would fail for what it does not test.
std::string make_watched_node(Config &config) {
    if (auto e = sandbox::make_node(config); !e.empty()) {
        return e;
    }
    return kit::own_etc_copy("/mnt/node/etc");
}

// Steps until one is watched: the first checks fully and arms the watch; a
// change elsewhere on the host (another test writing /run) may disarm it,
// so a few tries are allowed.
bool armed_after_steps(const Config &config) {
    for (int i = 0; i < 4; ++i) {
        if (step(config) == "watched") {
            return true;
        }
    }
    return false;
}

// In a sandbox node with slurmd's queues started in this process: `body`.
std::string with_watch(const std::function<std::string(Config &)> &body) {
    return in_child([&] {
        Config config;
        if (auto e = make_watched_node(config); !e.empty()) {
            return e;
        }
        sjail::NodeWatch watch;
        if (auto s = watch.start(config); !s.ok()) {
            return "the node watch: " + s.message();
        }
        return body(config);
    });
}

} // namespace

TEST(NodeWatchRoot, AStepAfterAnArmedOneJoinsWithoutTheFullCheck) {
    EXPECT_EQ(with_watch([](Config &config) {
                  CHILD_EXPECT(step(config) == "checked");
                  CHILD_EXPECT(armed_after_steps(config));
                  std::string release;
                  CHILD_EXPECT(step(config, "/etc/slurm-jail-release", &release) == "watched");
                  CHILD_EXPECT(release == "JAIL");
                  return std::string();
              }),
              "");
}

TEST(NodeWatchRoot, ASourceMountedOverOrUnmountedReachesTheNextStep) {
    EXPECT_EQ(with_watch([](Config &config) {
                  CHILD_EXPECT(armed_after_steps(config));
                  CHILD_EXPECT(::mount("over", "/mnt/node/data", "tmpfs", 0, nullptr) == 0);
                  std::string hello;
                  CHILD_EXPECT(step(config, "/opt/data/hello", &hello) == "checked");
                  CHILD_EXPECT(hello.empty());
                  CHILD_EXPECT(armed_after_steps(config));
                  CHILD_EXPECT(::umount2("/mnt/node/data", MNT_DETACH) == 0);
                  CHILD_EXPECT(step(config, "/opt/data/hello", &hello) == "checked");
                  CHILD_EXPECT(hello == "hi");
                  return std::string();
              }),
              "");
}

TEST(NodeWatchRoot, ASourceReplacedByRenameReachesTheNextStep) {
    EXPECT_EQ(with_watch([](Config &config) {
                  CHILD_EXPECT(armed_after_steps(config));
                  CHILD_EXPECT(::mkdir("/mnt/node/data.new", 0755) == 0);
                  kit::write_file("/mnt/node/data.new/hello", "new");
                  CHILD_EXPECT(::rename("/mnt/node/data", "/mnt/node/data.old") == 0);
                  CHILD_EXPECT(::rename("/mnt/node/data.new", "/mnt/node/data") == 0);
                  std::string hello;
                  CHILD_EXPECT(step(config, "/opt/data/hello", &hello) == "checked");
                  CHILD_EXPECT(hello == "new");
                  return std::string();
              }),
              "");
}

TEST(NodeWatchRoot, OtherSettingsCheckFully) {
    EXPECT_EQ(with_watch([](Config &config) {
                  CHILD_EXPECT(armed_after_steps(config));
                  Config other = config;
                  other.proc_options = "hidepid=2";
                  CHILD_EXPECT(step(other) == "checked");
                  return std::string();
              }),
              "");
}

TEST(NodeWatchRoot, AStepInAnotherMountNamespaceChecksFully) {
    EXPECT_EQ(with_watch([](Config &config) {
                  CHILD_EXPECT(armed_after_steps(config));
                  const std::string elsewhere = in_child([&] {
                      CHILD_EXPECT(::unshare(CLONE_NEWNS) == 0);
                      CHILD_EXPECT(step(config) == "checked");
                      return std::string();
                  });
                  CHILD_EXPECT(elsewhere.empty());
                  return std::string();
              }),
              "");
}

TEST(NodeWatchRoot, WithoutSlurmdsQueuesEveryStepChecksFully) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_watched_node(config); !e.empty()) {
                      return e;
                  }
                  for (int i = 0; i < 3; ++i) {
                      CHILD_EXPECT(step(config) == "checked");
                  }
                  // Queues of a slurmd that has exited since it armed them.
                  const std::string gone = in_child([&] {
                      sjail::NodeWatch watch;
                      CHILD_EXPECT(watch.start(config).ok());
                      CHILD_EXPECT(armed_after_steps(config));
                      return std::string();
                  });
                  CHILD_EXPECT(gone.empty());
                  CHILD_EXPECT(!sjail::read_small_file(config.state_dir + "/armed").empty());
                  CHILD_EXPECT(step(config) == "checked");
                  return std::string();
              }),
              "");
}

TEST(NodeWatchRoot, RecheckZeroChecksEveryStepFully) {
    EXPECT_EQ(with_watch([](Config &config) {
                  config.recheck_s = 0;
                  for (int i = 0; i < 3; ++i) {
                      CHILD_EXPECT(step(config) == "checked");
                  }
                  return std::string();
              }),
              "");
}

TEST(NodeWatchRoot, StoppingTheWatchDropsTheToken) {
    EXPECT_EQ(with_watch([](Config &config) {
                  CHILD_EXPECT(armed_after_steps(config));
                  sjail::NodeWatch other;
                  CHILD_EXPECT(other.start(config).ok()); // a new slurmd: new queues
                  CHILD_EXPECT(step(config) == "checked");
                  other.stop(config);
                  CHILD_EXPECT(sjail::read_small_file(config.state_dir + "/armed").empty());
                  CHILD_EXPECT(sjail::read_small_file(config.state_dir + "/watch").empty());
                  return std::string();
              }),
              "");
}

// slurmd loads its plugins before it daemonizes: the queues are then held by
// the process it became, not the one STATE/watch names.
TEST(NodeWatchRoot, QueuesInheritedByADaemonizedSlurmdAreFound) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = make_watched_node(config); !e.empty()) {
                      return e;
                  }
                  int hold[2];
                  CHILD_EXPECT(::pipe(hold) == 0);
                  const pid_t starter = ::fork();
                  if (starter == 0) {
                      sjail::NodeWatch watch;
                      if (!watch.start(config).ok() || ::fork() != 0) {
                          ::_exit(0); // the starter exits; its child keeps the queues
                      }
                      ::close(hold[1]);
                      char c = 0;
                      (void)!::read(hold[0], &c, 1);
                      ::_exit(0);
                  }
                  ::close(hold[0]);
                  CHILD_EXPECT(::waitpid(starter, nullptr, 0) == starter);
                  CHILD_EXPECT(armed_after_steps(config));
                  const std::string record = sjail::read_small_file(config.state_dir + "/watch");
                  CHILD_EXPECT(record.find("pid " + std::to_string(starter) + "\n") ==
                               std::string::npos);
                  ::close(hold[1]); // the daemon exits
                  for (int i = 0; i < 50 && step(config) == "watched"; ++i) {
                      ::usleep(20000);
                  }
                  CHILD_EXPECT(step(config) == "checked");
                  return std::string();
              }),
              "");
}

// A job's first step mounts its namespaces below STATE/jobs, and its end
// unmounts them: those mount events are the plugin's own, so the next step
// still joins through the watch. An admin's mount among them is not: taken
// off the queue with them, it drops the token instead.
TEST(NodeWatchRoot, AJobsOwnMountsKeepTheWatchArmedAnAdminsDoNot) {
    EXPECT_EQ(with_watch([](Config &config) {
                  // The job's init would outlive a failed check: it goes on every path.
                  struct DeleteJob {
                      const Config &config;
                      ~DeleteJob() { (void)sjail::delete_job_namespace(config, 21); }
                  } delete_job{config};
                  CHILD_EXPECT(armed_after_steps(config));
                  const std::string made = in_child([&] {
                      sjail::StepJail job;
                      const auto s = sjail::enter_job_for_step(config, 21, job);
                      return s.ok() ? std::string() : s.message();
                  });
                  CHILD_EXPECT(made.empty());
                  CHILD_EXPECT(step(config) == "watched");
                  CHILD_EXPECT(sjail::delete_job_namespace(config, 21).ok());
                  CHILD_EXPECT(step(config) == "watched");
                  // A mount of the plugin's own, let through; then one with an
                  // admin's beside it, which drops the token.
                  const std::string own_dir = config.state_dir + "/jobs/own";
                  CHILD_EXPECT(::mkdir(own_dir.c_str(), 0700) == 0);
                  sjail::OwnMounts own;
                  CHILD_EXPECT(::mount("own", own_dir.c_str(), "tmpfs", 0, nullptr) == 0);
                  own.made(own_dir);
                  own.let_through(config);
                  CHILD_EXPECT(step(config) == "watched");
                  own.dropping(own_dir);
                  CHILD_EXPECT(::umount2(own_dir.c_str(), MNT_DETACH) == 0);
                  CHILD_EXPECT(::mount("admin", "/mnt/node/data", "tmpfs", 0, nullptr) == 0);
                  own.let_through(config);
                  CHILD_EXPECT(sjail::read_small_file(config.state_dir + "/armed").empty());
                  std::string hello;
                  CHILD_EXPECT(step(config, "/opt/data/hello", &hello) == "checked");
                  CHILD_EXPECT(hello.empty());
                  return std::string();
              }),
              "");
}

// The state directory opened to users, or its stamp replaced (by root: it
// is closed), reaches the next step as the full check sees it.
TEST(NodeWatchRoot, TheStateDirectoryOpenedOrItsStampReplacedReachesTheNextStep) {
    EXPECT_EQ(with_watch([](Config &config) {
                  CHILD_EXPECT(armed_after_steps(config));
                  CHILD_EXPECT(::chmod(config.state_dir.c_str(), 0777) == 0);
                  const std::string opened = step(config);
                  CHILD_EXPECT(opened.find("writable by group or others") != std::string::npos);
                  CHILD_EXPECT(::chmod(config.state_dir.c_str(), 0700) == 0);
                  CHILD_EXPECT(armed_after_steps(config));
                  const std::string stamp = config.state_dir + "/stamp";
                  CHILD_EXPECT(::unlink(stamp.c_str()) == 0);
                  CHILD_EXPECT(::mkfifo(stamp.c_str(), 0600) == 0);
                  CHILD_EXPECT(step(config) == "checked");
                  struct stat st {};
                  CHILD_EXPECT(::lstat(stamp.c_str(), &st) == 0 && S_ISREG(st.st_mode));
                  return std::string();
              }),
              "");
}

// The jail's filesystem's last answer dropped (a failed probe drops it; so
// may an admin who wants the jail asked now): the next step asks the server.
TEST(NodeWatchRoot, TheLastAnswerDroppedSendsTheNextStepToTheServer) {
    EXPECT_EQ(with_watch([](Config &config) {
                  CHILD_EXPECT(armed_after_steps(config));
                  const std::string memo = config.state_dir + "/jail-probe";
                  CHILD_EXPECT(!sjail::read_small_file(memo).empty());
                  CHILD_EXPECT(::unlink(memo.c_str()) == 0);
                  CHILD_EXPECT(step(config) == "checked");
                  CHILD_EXPECT(!sjail::read_small_file(memo).empty()); // asked again
                  return std::string();
              }),
              "");
}

// A token whose pid now names another process (a pid reused within the
// token's life) holding an inotify and a fanotify instance at the same
// numbers, as any user can make them, but watching no mount namespace: its
// empty queues must not stand in for slurmd's.
TEST(NodeWatchRoot, AReusedPidHoldingLookalikeQueuesIsNotTrusted) {
    EXPECT_EQ(with_watch([](Config &config) {
                  CHILD_EXPECT(armed_after_steps(config));
                  const std::string armed = config.state_dir + "/armed";
                  auto token = sjail::parse_armed_token(sjail::read_small_file(armed));
                  CHILD_EXPECT(token.has_value());
                  int ready[2];
                  int done[2];
                  CHILD_EXPECT(::pipe(ready) == 0 && ::pipe(done) == 0);
                  const pid_t impostor = ::fork();
                  if (impostor == 0) {
                      const int in = ::inotify_init1(0);
                      const int fan = ::fanotify_init(FAN_CLASS_NOTIF, O_RDONLY);
                      const bool ok = in >= 0 && fan >= 0 &&
                                      ::dup2(in, token->watch.inotify_fd) >= 0 &&
                                      ::dup2(fan, token->watch.fanotify_fd) >= 0;
                      (void)!::write(ready[1], ok ? "y" : "n", 1);
                      char c = 0;
                      (void)!::read(done[0], &c, 1);
                      ::_exit(0);
                  }
                  char c = 0;
                  CHILD_EXPECT(::read(ready[0], &c, 1) == 1 && c == 'y');
                  token->watch.pid = impostor;
                  CHILD_EXPECT(
                      sjail::write_file_atomically(armed, sjail::format_armed_token(*token)).ok());
                  const std::string how = step(config);
                  (void)!::write(done[1], "x", 1);
                  ::waitpid(impostor, nullptr, 0);
                  CHILD_EXPECT(how == "checked");
                  return std::string();
              }),
              "");
}
