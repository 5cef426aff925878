// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/node/mount_plan.hpp"
#include "sjail/core/parse_config.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace sjail;

namespace {
Config config_of(const std::vector<std::string> &args) {
    auto parsed = parse_config(args);
    EXPECT_TRUE(parsed.status.ok()) << parsed.status.message();
    return parsed.config;
}
} // namespace

TEST(MountPlan, DefaultsGiveTheNodeLocalMounts) {
    const auto plan = build_mount_plan(config_of({"jail=/mnt/jail"}));
    const std::vector<MountOp> expected = {
        {MountKind::FreshProc, "", "/proc", false, true, {}},
        {MountKind::RecursiveBind, "/dev", "/dev", false, false, {}},
        {MountKind::RecursiveBind, "/sys", "/sys", false, true, {}},
        {MountKind::FreshRun, "", "/run", false, true, {}},
        {MountKind::Bind, "/var/lib/slurm-jail/tmp", "/tmp", false, true, {}},
        {MountKind::Bind, "/run/munge", "/run/munge", false, true, {}},
        {MountKind::Bind, "/etc/slurm", "/etc/slurm", true, true, {}},
        {MountKind::Bind, "/var/spool/slurmd", "/var/spool/slurmd", false, true, {}},
        {MountKind::Bind, "/etc/hosts", "/etc/hosts", true, true, {}},
        {MountKind::Bind, "/etc/resolv.conf", "/etc/resolv.conf", true, true, {}},
    };
    EXPECT_EQ(plan, expected);
}

TEST(MountPlan, ProcIsFreshAndLocked) {
    const auto plan = build_mount_plan(config_of({"jail=/j"}));
    ASSERT_FALSE(plan.empty());
    EXPECT_EQ(plan.front().kind, MountKind::FreshProc);
    EXPECT_TRUE(plan.front().nosuid_nodev);
}

TEST(MountPlan, AdminBindsComeLastParentsFirst) {
    const auto plan = build_mount_plan(
        config_of({"jail=/j", "bind=/data/x:/opt/x:ro", "bind=/data/opt:/opt", "bind=/lib64"}));
    ASSERT_EQ(plan.size(), 13U);
    EXPECT_EQ(plan[10], (MountOp{MountKind::Bind, "/lib64", "/lib64", false, false, {}}));
    EXPECT_EQ(plan[11], (MountOp{MountKind::Bind, "/data/opt", "/opt", false, false, {}}));
    EXPECT_EQ(plan[12], (MountOp{MountKind::Bind, "/data/x", "/opt/x", true, false, {}}));
}

TEST(MountPlan, CustomNodePaths) {
    const auto plan =
        build_mount_plan(config_of({"jail=/j", "munge=/m", "conf_dir=/c", "spool=/s", "tmp=/t"}));
    EXPECT_EQ(plan[4], (MountOp{MountKind::Bind, "/t", "/tmp", false, true, {}}));
    EXPECT_EQ(plan[5], (MountOp{MountKind::Bind, "/m", "/m", false, true, {}}));
    EXPECT_EQ(plan[6], (MountOp{MountKind::Bind, "/c", "/c", true, true, {}}));
    EXPECT_EQ(plan[7], (MountOp{MountKind::Bind, "/s", "/s", false, true, {}}));
}

TEST(MountPlan, NodeRunComesBeforeEveryBindBelowIt) {
    const auto plan = build_mount_plan(
        config_of({"jail=/j", "bind=/srv/sock:/run/site", "bind=/data:/opt", "bind=/x:/run/a/b"}));
    const auto run = std::find_if(plan.begin(), plan.end(),
                                  [](const MountOp &op) { return op.target == "/run"; });
    ASSERT_NE(run, plan.end());
    EXPECT_EQ(run->kind, MountKind::FreshRun);
    EXPECT_TRUE(run->source.empty());
    EXPECT_TRUE(run->nosuid_nodev);
    for (auto it = plan.begin(); it != plan.end(); ++it) {
        if (it->target.starts_with("/run/")) {
            EXPECT_GT(it - run, 0) << it->target;
        }
    }
    EXPECT_EQ(std::count_if(plan.begin(), plan.end(),
                            [](const MountOp &op) { return op.kind == MountKind::FreshRun; }),
              1);
}

TEST(MountPlan, RunJailKeepsTheJailsOwnRun) {
    const auto plan = build_mount_plan(config_of({"jail=/j", "run=jail"}));
    ASSERT_EQ(plan.size(), 9U);
    EXPECT_TRUE(std::none_of(plan.begin(), plan.end(),
                             [](const MountOp &op) { return op.target == "/run"; }));
    EXPECT_EQ(plan[4], (MountOp{MountKind::Bind, "/run/munge", "/run/munge", false, true, {}}));
}

TEST(MountPlan, NodeRunSkeletonIsDebiansStickyLockDirectory) {
    EXPECT_EQ(node_run_skeleton(), (std::vector<RunDir>{{"/run/lock", 01777}}));
}

TEST(MountPlan, MountPointsBelowRunAreThePluginsOnlyWithRunNode) {
    const auto node = config_of({"jail=/j"});
    EXPECT_TRUE(in_node_run(node.run, "/run/munge"));
    EXPECT_TRUE(in_node_run(node.run, "/run/a/b"));
    EXPECT_FALSE(in_node_run(node.run, "/run"));
    EXPECT_FALSE(in_node_run(node.run, "/runner"));
    EXPECT_FALSE(in_node_run(node.run, "/etc/slurm"));
    EXPECT_FALSE(in_node_run(config_of({"jail=/j", "run=jail"}).run, "/run/munge"));
}
