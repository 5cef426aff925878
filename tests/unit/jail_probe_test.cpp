// SPDX-License-Identifier: Apache-2.0
// What a node keeps of its last question to the jail's filesystem, when it
// asks again, and how a failing filesystem is named. Pure.
#include "sjail/core/node/jail_probe.hpp"

#include <gtest/gtest.h>

using sjail::JailProbeMemo;

TEST(JailProbeMemo, RoundTrips) {
    EXPECT_EQ(sjail::format_probe_memo({1234}), "jail-probe v1 1234\n");
    EXPECT_EQ(sjail::parse_probe_memo("jail-probe v1 1234\n"), JailProbeMemo{1234});
}

TEST(JailProbeMemo, AnythingElseIsNoMemo) {
    for (const char *bad : {"", "jail-probe v1 12", "jail-probe v1 x\n", "jail-probe v1 12\nmore\n",
                            "jail-probe v2 12\n", "jail-probe v1 \n", "jail-probe v1 12 \n",
                            "jail-probe v1 99999999999999999999\n"}) {
        EXPECT_FALSE(sjail::parse_probe_memo(bad)) << bad;
    }
}

TEST(JailProbeMemo, AskedAgainOnlyOnceRecheckSecondsHavePassed) {
    const JailProbeMemo memo{1000};
    EXPECT_FALSE(sjail::probe_due(memo, 1000, 60));
    EXPECT_FALSE(sjail::probe_due(memo, 1059, 60));
    EXPECT_TRUE(sjail::probe_due(memo, 1060, 60));
    EXPECT_TRUE(sjail::probe_due(std::nullopt, 1000, 60));
    // recheck=0: every step asks.
    EXPECT_TRUE(sjail::probe_due(memo, 1000, 0));
    // A memo from the future (a clock that went back, a planted file) is not trusted.
    EXPECT_TRUE(sjail::probe_due(memo, 999, 60));
}

TEST(JailProbeMemo, TheFilesystemIsNamedFromMountinfo) {
    const std::string mountinfo =
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
        "345 22 0:77 / /mnt/jail rw,relatime shared:200 - fuse.glusterfs 10.0.0.4:jail "
        "rw,user_id=0,group_id=0,default_permissions,allow_other\n"
        "346 22 0:78 /export/jail /srv/jail rw - nfs4 server:/export rw,vers=4.2\n";
    EXPECT_EQ(sjail::describe_mount(mountinfo, 345),
              "fuse.glusterfs 10.0.0.4:jail mounted at /mnt/jail");
    EXPECT_EQ(sjail::describe_mount(mountinfo, 346), "nfs4 server:/export mounted at /srv/jail");
    EXPECT_EQ(sjail::describe_mount(mountinfo, 34), std::nullopt);
    EXPECT_EQ(sjail::describe_mount("345 22 0:77 / /mnt/jail rw\n", 345), std::nullopt);
}
