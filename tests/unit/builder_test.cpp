// SPDX-License-Identifier: Apache-2.0
// Root-level: a builder that misbehaves in any way is refused and its
// namespace is never kept; a slow builder whose caller is interrupted by
// signals still gets through. Linked with sjail_sys_faults (builder.hpp).
#include "sandbox.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/builder.hpp"
#include "sjail/sys/node/node_namespace.hpp"
#include "sjail/sys/ns_bind.hpp"
#include "sjail/sys/small_file.hpp"
#include "sjail/sys/state_dir.hpp"

#include <chrono>
#include <csignal>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/time.h>
#include <sys/vfs.h>
#include <sys/wait.h>

using kit::in_child;
using sjail::BuilderFault;
using sjail::Config;

namespace {

bool ns_file_is_kept(const Config &config) {
    sjail::Fd ns;
    sjail::open_kept_namespace(config.state_dir, ns);
    return ns.valid();
}

// In a fresh sandbox node: build with `fault`, expect a refusal whose
// message contains `expected`, nothing kept, and a clean build afterwards.
std::string refused_and_not_kept(BuilderFault fault, const std::string &expected,
                                 int timeout_s = 30) {
    return in_child([&] {
        Config config;
        if (auto e = sandbox::make_node(config); !e.empty()) {
            return e;
        }
        config.build_timeout_s = timeout_s;
        sjail::set_builder_fault(fault);
        sjail::NodeNamespace node;
        const auto s = sjail::acquire_node_namespace(config, node);
        CHILD_EXPECT(!s.ok());
        CHILD_EXPECT(s.message().find(expected) != std::string::npos);
        CHILD_EXPECT(!node.fd.valid());
        CHILD_EXPECT(!ns_file_is_kept(config));
        CHILD_EXPECT(sjail::read_small_file(config.state_dir + "/stamp").empty());
        // The next, well-behaved build works: nothing of the failure remained.
        sjail::set_builder_fault(BuilderFault::None);
        if (auto again = sjail::enter_node_jail(config); !again.ok()) {
            return "after the fault: " + again.message();
        }
        CHILD_EXPECT(kit::read_file("/etc/slurm-jail-release") == "JAIL");
        return std::string();
    });
}

void on_alarm(int /*sig*/) {}

// Binds, on `path`, a fresh mount namespace that is a plain copy of the
// caller's (no pivot): what a broken build could have left behind. Made on
// each CPU in turn until the kernel accepts the bind (see ns_bind.hpp).
bool bind_unpivoted_namespace(const std::string &path) {
    for (const int cpu : sjail::cpus_to_try()) {
        int ready[2];
        int done[2];
        if (::pipe(ready) != 0 || ::pipe(done) != 0) {
            return false;
        }
        const pid_t pid = ::fork();
        if (pid == 0) {
            sjail::pin_to_cpu(cpu);
            char c = ::unshare(CLONE_NEWNS) == 0 ? 'y' : 'n';
            (void)!::write(ready[1], &c, 1);
            (void)!::read(done[0], &c, 1);
            ::_exit(0);
        }
        char c = 0;
        const bool unshared = ::read(ready[0], &c, 1) == 1 && c == 'y';
        const int err = unshared ? sjail::bind_namespace_of(pid, "mnt", path) : EINVAL;
        (void)!::write(done[1], "x", 1);
        ::waitpid(pid, nullptr, 0);
        for (const int fd : {ready[0], ready[1], done[0], done[1]}) {
            ::close(fd);
        }
        if (err != ELOOP) {
            return err == 0;
        }
    }
    return false;
}

} // namespace

TEST(Builder, ABuilderThatReportsNothingIsRefused) {
    EXPECT_EQ(refused_and_not_kept(BuilderFault::Silent, "reported no complete result"), "");
}

TEST(Builder, ACrashedBuilderIsRefused) {
    EXPECT_EQ(refused_and_not_kept(BuilderFault::Crash, "killed by signal 11"), "");
}

TEST(Builder, ABuilderWhosePivotDidNotHappenIsRefused) {
    EXPECT_EQ(
        refused_and_not_kept(BuilderFault::NoPivot, "pivot_root into the jail did not happen"), "");
}

TEST(Builder, ABuilderThatFailsAfterReportingSuccessIsRefused) {
    EXPECT_EQ(
        refused_and_not_kept(BuilderFault::OkThenFail, "reported success but exited with status 3"),
        "");
}

TEST(Builder, AHungBuilderIsKilledAtItsDeadline) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(refused_and_not_kept(BuilderFault::Hang, "did not finish within 1 s", 1), "");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// The caller's reads are interrupted by signals every 20 ms while the
// builder takes 300 ms: an interrupted read is retried, never taken for an
// (empty) report.
TEST(Builder, ReadsInterruptedBySignalsAreRetried) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = sandbox::make_node(config); !e.empty()) {
                      return e;
                  }
                  struct sigaction sa {};
                  sa.sa_handler = on_alarm; // no SA_RESTART: reads and polls return EINTR
                  CHILD_EXPECT(::sigaction(SIGALRM, &sa, nullptr) == 0);
                  itimerval every20ms{{0, 20000}, {0, 20000}};
                  CHILD_EXPECT(::setitimer(ITIMER_REAL, &every20ms, nullptr) == 0);
                  sjail::set_builder_fault(BuilderFault::Slow);
                  const auto s = sjail::enter_node_jail(config);
                  itimerval off{};
                  (void)::setitimer(ITIMER_REAL, &off, nullptr);
                  if (!s.ok()) {
                      return s.message();
                  }
                  CHILD_EXPECT(kit::read_file("/etc/slurm-jail-release") == "JAIL");
                  return std::string();
              }),
              "");
}

// A kept namespace whose root is not the jail (how it got there does not
// matter) is noticed by the next step, which refuses and drops it, and the
// step after that rebuilds a real one.
TEST(Builder, AKeptNamespaceThatIsNotTheJailIsRefusedThenRebuilt) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = sandbox::make_node(config); !e.empty()) {
                      return e;
                  }
                  sjail::NodeNamespace node;
                  if (auto s = sjail::acquire_node_namespace(config, node); !s.ok()) {
                      return s.message();
                  }
                  // Swap the kept namespace for one that is not the jail, keeping the stamp.
                  const std::string ns = config.state_dir + "/ns";
                  CHILD_EXPECT(::umount2(ns.c_str(), MNT_DETACH) == 0);
                  CHILD_EXPECT(bind_unpivoted_namespace(ns));
                  CHILD_EXPECT(ns_file_is_kept(config));
                  const std::string step = in_child([&] {
                      const auto s = sjail::enter_node_jail(config);
                      CHILD_EXPECT(!s.ok());
                      CHILD_EXPECT(s.message().find("does not have the jail as its root") !=
                                   std::string::npos);
                      return std::string();
                  });
                  CHILD_EXPECT(step.empty());
                  CHILD_EXPECT(sjail::read_small_file(config.state_dir + "/stamp").empty());
                  if (auto s = sjail::enter_node_jail(config); !s.ok()) {
                      return "rebuild: " + s.message();
                  }
                  CHILD_EXPECT(kit::read_file("/etc/slurm-jail-release") == "JAIL");
                  return std::string();
              }),
              "");
}
