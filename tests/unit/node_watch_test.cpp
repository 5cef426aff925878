// SPDX-License-Identifier: Apache-2.0
// The node watch's records, when its token stands in for a step's full
// check, and which paths it watches. Pure.
#include "sjail/core/node/node_watch.hpp"

#include <gtest/gtest.h>

using sjail::ArmedToken;
using sjail::StepView;
using sjail::WatchPath;
using sjail::WatchRecord;

namespace {

ArmedToken sample_token() {
    return {
        {4242, 7, 8, 4026531841},  1060, 2147483659, "1.0", "fnv1a64:0123456789abcdef", {2049, 77},
        "fnv1a64:fedcba9876543210"};
}

StepView step_of(const ArmedToken &token, std::int64_t now_s) {
    return {now_s, token.plugin, token.settings, token.root_mount};
}

} // namespace

TEST(NodeWatch, RecordsRoundTrip) {
    const WatchRecord record{4242, 7, 8, 4026531841};
    EXPECT_EQ(sjail::format_watch_record(record),
              "sjail-watch 1\npid 4242\ninotify 7\nfanotify 8\nmntns 4026531841\n");
    EXPECT_EQ(sjail::parse_watch_record(sjail::format_watch_record(record)), record);
    const ArmedToken token = sample_token();
    EXPECT_EQ(sjail::parse_armed_token(sjail::format_armed_token(token)), token);
}

TEST(NodeWatch, AnythingElseIsNoRecordAndNoToken) {
    for (const char *bad :
         {"", "sjail-watch 1\n", "sjail-watch 2\npid 1\ninotify 3\nfanotify 4\nmntns 5\n",
          "sjail-watch 1\npid 0\ninotify 3\nfanotify 4\nmntns 5\n",
          "sjail-watch 1\npid 1\ninotify -1\nfanotify 4\nmntns 5\n",
          "sjail-watch 1\npid 1\ninotify 3\nfanotify 4\nmntns 5\nmore\n",
          "sjail-watch 1\npid 1\ninotify 3\nfanotify 4\nmntns x5\n",
          "sjail-watch 1\npid 1\nfanotify 4\ninotify 3\nmntns 5\n"}) {
        EXPECT_FALSE(sjail::parse_watch_record(bad)) << bad;
    }
    const std::string good = sjail::format_armed_token(sample_token());
    EXPECT_FALSE(sjail::parse_armed_token(""));
    EXPECT_FALSE(sjail::parse_armed_token(good.substr(0, good.find("stamp\n"))));
    EXPECT_FALSE(sjail::parse_armed_token(good.substr(0, good.find("jail 2049"))));
    std::string no_root = good;
    no_root.erase(no_root.find("root "), no_root.find("plugin ") - no_root.find("root "));
    EXPECT_FALSE(sjail::parse_armed_token(no_root));
    std::string other_version = good;
    other_version[12] = '2';
    EXPECT_FALSE(sjail::parse_armed_token(other_version));
}

TEST(NodeWatch, ATokenStandsInOnlyForTheSameStepBeforeItExpires) {
    const ArmedToken token = sample_token();
    EXPECT_TRUE(sjail::token_current(token, step_of(token, 1000), 60));
    EXPECT_TRUE(sjail::token_current(token, step_of(token, 1059), 60));
    EXPECT_FALSE(sjail::token_current(token, step_of(token, 1060), 60));
    // A clock that went back, or a token that outlives recheck=, is stale.
    EXPECT_FALSE(sjail::token_current(token, step_of(token, 999), 60));
    EXPECT_FALSE(sjail::token_current(token, step_of(token, 1030), 10));
    StepView other = step_of(token, 1000);
    other.plugin = "1.1";
    EXPECT_FALSE(sjail::token_current(token, other, 60));
    other = step_of(token, 1000);
    other.settings = "fnv1a64:0123456789abcdee";
    EXPECT_FALSE(sjail::token_current(token, other, 60));
    // A step in another mount namespace than the one whose mounts are
    // watched, or with another root.
    other = step_of(token, 1000);
    other.root_mount += 1;
    EXPECT_FALSE(sjail::token_current(token, other, 60));
}

TEST(NodeWatch, ATokenLastsUntilTheJailsFilesystemIsDueToBeAskedAgain) {
    EXPECT_EQ(sjail::armed_until(sjail::JailProbeMemo{1000}, 1010, 60), 1060);
    EXPECT_EQ(sjail::armed_until(sjail::JailProbeMemo{1000}, 1060, 60), 0);
    EXPECT_EQ(sjail::armed_until(std::nullopt, 1010, 60), 0);
    EXPECT_EQ(sjail::armed_until(sjail::JailProbeMemo{1000}, 1000, 0), 0);
}

TEST(NodeWatch, EveryPathIsWatchedItselfAndThroughTheEntriesAboveIt) {
    const auto watches = sjail::watches_for(
        {"/run/munge", "/etc/resolv.conf", "/run/systemd/resolve/stub-resolv.conf", "relative"},
        "/run/slurm-jail", {});
    const std::vector<WatchPath> expected = {
        {"/", true, false, false},
        {"/etc", true, false, false},
        {"/etc/resolv.conf", false, true, false},
        {"/run", true, false, false},
        {"/run/munge", false, true, false},
        {"/run/systemd", true, false, false},
        {"/run/systemd/resolve", true, false, false},
        {"/run/systemd/resolve/stub-resolv.conf", false, true, false},
    };
    EXPECT_EQ(watches, expected);
}

TEST(NodeWatch, APathBothCheckedAndAboveAnotherIsWatchedForBoth) {
    const auto watches =
        sjail::watches_for({"/usr/local/nvidia", "/usr/local/nvidia/lib64"}, "", {});
    ASSERT_EQ(watches.size(), 5U);
    EXPECT_EQ(watches[3], (WatchPath{"/usr/local/nvidia", true, true, false}));
    EXPECT_EQ(watches[4], (WatchPath{"/usr/local/nvidia/lib64", false, true, false}));
}

TEST(NodeWatch, ThePluginsOwnDirectoryIsNotWatchedForEntries) {
    const auto watches = sjail::watches_for({"/run/slurm-jail/ld.so.cache"}, "/run/slurm-jail", {});
    const std::vector<WatchPath> expected = {
        {"/", true, false, false},
        {"/run", true, false, false},
        {"/run/slurm-jail/ld.so.cache", false, true, false},
    };
    EXPECT_EQ(watches, expected);
}

TEST(NodeWatch, OwnersAndModesAreWatchedOnlyAboveTheClosedPaths) {
    const auto watches = sjail::watches_for({"/srv/jail", "/srv/node/munge"}, "", {"/srv/jail"});
    const std::vector<WatchPath> expected = {
        {"/", true, false, true},
        {"/srv", true, false, true},
        {"/srv/jail", false, true, false},
        {"/srv/node", true, false, false},
        {"/srv/node/munge", false, true, false},
    };
    EXPECT_EQ(watches, expected);
}
