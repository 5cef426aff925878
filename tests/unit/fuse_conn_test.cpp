// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/job/fuse_conn.hpp"
#include "sjail/core/job/root_path_env.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <string_view>

namespace {

// Lines as a job's process shows them: the jail on GlusterFS (FUSE), a
// squashfuse mount and a FUSE block device of a container, and others.
constexpr const char *kMountinfo =
    "300 1 0:52 / / rw,relatime - fuse.glusterfs node:/jail rw,user_id=0,group_id=0\n"
    "301 300 0:5 / /dev rw - devtmpfs udev rw\n"
    "310 300 0:61 / /tmp/sqfs rw,nosuid,nodev - fuse.squashfuse squashfuse rw,user_id=0\n"
    "311 300 8:17 / /mnt/blk rw - fuseblk /dev/sdb1 rw,user_id=1000\n"
    "312 300 0:62 / /tmp/plain rw - fuse stuck rw,user_id=0,group_id=0\n"
    "313 300 0:63 / /tmp/fusectl rw - fusectl fusectl rw\n"
    "314 300 0:64 / /tmp/t rw - tmpfs tmpfs rw";

TEST(FuseConnections, EveryFuseTypeByItsKernelDeviceNumber) {
    const auto conns = sjail::fuse_connections_of_mountinfo(kMountinfo);
    EXPECT_EQ(conns, (std::set<std::uint64_t>{52, 61, 62, (8ULL << 20U) | 17U}));
}

TEST(FuseConnections, NoneInATableWithoutFuseOrInGarbage) {
    EXPECT_TRUE(sjail::fuse_connections_of_mountinfo("").empty());
    EXPECT_TRUE(
        sjail::fuse_connections_of_mountinfo("1 2 0:5 / /dev rw - devtmpfs u rw\n").empty());
    EXPECT_TRUE(sjail::fuse_connections_of_mountinfo("1 2 x:y / /a rw - fuse f rw\n").empty());
    EXPECT_TRUE(sjail::fuse_connections_of_mountinfo("no separator fuse\n").empty());
}

std::string status(const char *state, const char *sigpnd, const char *shdpnd) {
    return std::string("Name:\tstuck_fuse\nState:\t") + state + "\nTgid:\t7\nSigPnd:\t" + sigpnd +
           "\nShdPnd:\t" + shdpnd + "\nSigBlk:\t0000000000000000\n";
}

TEST(StuckDying, SigkillPendingInUninterruptibleSleepOrBehindAGoneLeader) {
    constexpr const char *kKill = "0000000000000100";
    constexpr const char *kNone = "0000000000000000";
    EXPECT_TRUE(sjail::is_stuck_dying(status("D (disk sleep)", kNone, kKill)));
    EXPECT_TRUE(sjail::is_stuck_dying(status("D (disk sleep)", kKill, kNone)));
    EXPECT_TRUE(sjail::is_stuck_dying(status("Z (zombie)", kKill, kKill)));
    EXPECT_FALSE(sjail::is_stuck_dying(status("D (disk sleep)", kNone, kNone)));
    EXPECT_FALSE(sjail::is_stuck_dying(status("S (sleeping)", kKill, kKill)));
    EXPECT_FALSE(sjail::is_stuck_dying(status("D (disk sleep)", "0000000000004000", kNone)));
    EXPECT_FALSE(sjail::is_stuck_dying(""));
}

TEST(RootPathVariables, PmixsDirectoriesAreRemovedWithAReason) {
    EXPECT_NE(std::find(sjail::kRootPathVariables.begin(), sjail::kRootPathVariables.end(),
                        std::string_view("SLURM_PMIX_TMPDIR")),
              sjail::kRootPathVariables.end());
    const std::string line = sjail::root_path_variable_removed("SLURM_PMIX_TMPDIR", "/etc");
    EXPECT_EQ(line.rfind("SLURM_PMIX_TMPDIR=/etc removed from the step's environment", 0), 0U)
        << line;
    EXPECT_NE(line.find("PMIxCliTmpDirBase"), std::string::npos) << line;
    // A value cannot forge a line of slurmd's log.
    const std::string forged =
        sjail::root_path_variable_removed("SLURM_PMIX_TMPDIR", "/x\n[2026] error: forged");
    EXPECT_EQ(forged.find('\n'), std::string::npos) << forged;
}

} // namespace
