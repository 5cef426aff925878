#include "mount_plan.hpp"

#include <gtest/gtest.h>

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
    ASSERT_EQ(plan.size(), 12U);
    EXPECT_EQ(plan[9], (MountOp{MountKind::Bind, "/lib64", "/lib64", false, false, {}}));
    EXPECT_EQ(plan[10], (MountOp{MountKind::Bind, "/data/opt", "/opt", false, false, {}}));
    EXPECT_EQ(plan[11], (MountOp{MountKind::Bind, "/data/x", "/opt/x", true, false, {}}));
}

TEST(MountPlan, CustomNodePaths) {
    const auto plan =
        build_mount_plan(config_of({"jail=/j", "munge=/m", "conf_dir=/c", "spool=/s", "tmp=/t"}));
    EXPECT_EQ(plan[3], (MountOp{MountKind::Bind, "/t", "/tmp", false, true, {}}));
    EXPECT_EQ(plan[4], (MountOp{MountKind::Bind, "/m", "/m", false, true, {}}));
    EXPECT_EQ(plan[5], (MountOp{MountKind::Bind, "/c", "/c", true, true, {}}));
    EXPECT_EQ(plan[6], (MountOp{MountKind::Bind, "/s", "/s", false, true, {}}));
}
