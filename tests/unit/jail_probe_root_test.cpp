// SPDX-License-Identifier: Apache-2.0
// Root-level: a step asks the jail's filesystem itself (the probe) only when
// its last answer on this node is recheck= seconds old, and keeps when it
// answered in STATE/jail-probe; every other check of a step is answered by
// the node's kernel.
#include "sandbox.hpp"
#include "sjail/core/node/jail_probe.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/jail_probe.hpp"
#include "sjail/sys/node/node_namespace.hpp"
#include "sjail/sys/small_file.hpp"

#include <ctime>
#include <gtest/gtest.h>

using kit::in_child;
using sjail::Config;

namespace {

std::int64_t boot_seconds() {
    timespec now{};
    (void)::clock_gettime(CLOCK_BOOTTIME, &now);
    return now.tv_sec;
}

std::string memo_path(const Config &config) {
    return config.state_dir + "/jail-probe";
}

// When STATE/jail-probe says the filesystem last answered (-1: no memo).
std::int64_t answered_at(const Config &config) {
    const auto memo = sjail::parse_probe_memo(sjail::read_small_file(memo_path(config)));
    return memo ? memo->at_s : -1;
}

// What a step does before its tasks run, in a child (entering cannot be undone).
std::string step(const Config &config) {
    return in_child([&] {
        const auto s = sjail::enter_node_jail(config);
        return s.ok() ? std::string() : s.message();
    });
}

std::string plant_memo(const Config &config, std::int64_t at) {
    return sjail::write_file_atomically(memo_path(config), sjail::format_probe_memo({at})).ok()
               ? ""
               : "cannot write " + memo_path(config);
}

} // namespace

TEST(JailProbe, AStepAsksOnlyWhenTheLastAnswerIsRecheckSecondsOld) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = sandbox::make_node(config); !e.empty()) {
                      return e;
                  }
                  CHILD_EXPECT(config.recheck_s == 60);
                  // The first step on the node asks, and keeps the answer.
                  CHILD_EXPECT(step(config).empty());
                  const std::int64_t first = answered_at(config);
                  CHILD_EXPECT(first > 0 && first <= boot_seconds());
                  // A recent answer: the step does not ask again.
                  const std::int64_t recent = boot_seconds() - 30;
                  CHILD_EXPECT(plant_memo(config, recent).empty());
                  CHILD_EXPECT(step(config).empty());
                  CHILD_EXPECT(answered_at(config) == recent);
                  // An answer recheck= seconds old, or from the future: it asks.
                  for (const std::int64_t at : {boot_seconds() - 60, boot_seconds() + 100}) {
                      CHILD_EXPECT(plant_memo(config, at).empty());
                      CHILD_EXPECT(step(config).empty());
                      CHILD_EXPECT(answered_at(config) > 0 && answered_at(config) != at &&
                                   answered_at(config) <= boot_seconds());
                  }
                  // recheck=0: every step asks.
                  config.recheck_s = 0;
                  CHILD_EXPECT(plant_memo(config, boot_seconds() - 1).empty());
                  CHILD_EXPECT(step(config).empty());
                  CHILD_EXPECT(answered_at(config) == boot_seconds() ||
                               answered_at(config) == boot_seconds() - 1);
                  CHILD_EXPECT(plant_memo(config, 5).empty());
                  CHILD_EXPECT(step(config).empty());
                  CHILD_EXPECT(answered_at(config) > 5);
                  return std::string();
              }),
              "");
}

// What is kept is only a time: a planted or torn file is no answer.
TEST(JailProbe, AMemoThatIsNotOneIsAskedAgainAndReplaced) {
    EXPECT_EQ(in_child([] {
                  Config config;
                  if (auto e = sandbox::make_node(config); !e.empty()) {
                      return e;
                  }
                  CHILD_EXPECT(step(config).empty());
                  CHILD_EXPECT(
                      sjail::write_file_atomically(memo_path(config), "jail-probe v1 9").ok());
                  CHILD_EXPECT(step(config).empty());
                  CHILD_EXPECT(answered_at(config) > 9);
                  return std::string();
              }),
              "");
}

// Naming the jail's filesystem asks no server: a path the kernel's lookup
// cache does not hold is named by the nearest mount above it that it does.
TEST(JailProbe, TheFilesystemIsNamedFromTheNearestPathTheKernelHolds) {
    EXPECT_EQ(sjail::name_jail_filesystem("/proc"), "proc proc mounted at /proc");
    EXPECT_EQ(sjail::name_jail_filesystem("/proc/sjail-not-there/jail"),
              "proc proc mounted at /proc");
    EXPECT_EQ(sjail::name_jail_filesystem("relative/jail"), "the filesystem of relative/jail");
}
