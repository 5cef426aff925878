// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/node/node_stamp.hpp"
#include "sjail/core/parse_config.hpp"
#include "sjail/core/proc_options.hpp"

#include <gtest/gtest.h>

using sjail::FileId;
using sjail::namespace_stamp;
using sjail::SourceId;

namespace {

sjail::Config config() {
    auto parsed = sjail::parse_config({"jail=/mnt/jail", "bind=/data:/opt/data"});
    EXPECT_TRUE(parsed.status.ok());
    return parsed.config;
}

const std::vector<SourceId> kSources = {{"/etc/resolv.conf", {2049, 915}, 30},
                                        {"/data", {51, 2}, 77}};

} // namespace

TEST(NodeStamp, SameInputsSameStamp) {
    EXPECT_EQ(namespace_stamp(config(), "0.1.0 a", {1, 2}, kSources),
              namespace_stamp(config(), "0.1.0 a", {1, 2}, kSources));
}

TEST(NodeStamp, ChangesWithEverythingTheNamespaceIsBuiltFrom) {
    const std::string base = namespace_stamp(config(), "0.1.0 a", {1, 2}, kSources);
    EXPECT_NE(namespace_stamp(config(), "0.1.1 a", {1, 2}, kSources), base) << "plugin upgrade";
    EXPECT_NE(namespace_stamp(config(), "0.1.0 a", {1, 3}, kSources), base) << "new jail dir";
    auto renamed = kSources;
    renamed[0].id.ino = 916; // /etc/resolv.conf replaced by rename
    EXPECT_NE(namespace_stamp(config(), "0.1.0 a", {1, 2}, renamed), base);
    auto unmounted = kSources;
    unmounted[1] = {"/data", {2049, 4000}, 30}; // the underlying directory shows again
    EXPECT_NE(namespace_stamp(config(), "0.1.0 a", {1, 2}, unmounted), base);
    auto remounted = kSources;
    remounted[1].mount_id = 78; // same inode, another mount
    EXPECT_NE(namespace_stamp(config(), "0.1.0 a", {1, 2}, remounted), base);
    auto other = config();
    other.binds[0].read_only = true;
    EXPECT_NE(namespace_stamp(other, "0.1.0 a", {1, 2}, kSources), base) << "settings";
    EXPECT_NE(namespace_stamp(config(), "0.1.0 a", {1, 2}, kSources, "gpu auto none\n"), base)
        << "the GPU part";
}

TEST(NodeStamp, TheGpuPartEndsTheStampAsItIs) {
    const std::string gpu = "gpu auto /\nnvidia-driver 580.159.04\nlibrary /x dev=1\n";
    const std::string stamp = namespace_stamp(config(), "0.1.0 a", {1, 2}, kSources, gpu);
    EXPECT_TRUE(stamp.ends_with("\n" + gpu)) << stamp;
    EXPECT_NE(stamp, namespace_stamp(config(), "0.1.0 a", {1, 2}, kSources,
                                     "gpu auto /\nnvidia-driver 580.159.04\nlibrary /x dev=2\n"));
}

TEST(NodeStamp, TheNodesProcOptionsCountOnlyWithoutProcSetting) {
    const std::string base = namespace_stamp(config(), "0.1.0 a", {1, 2}, kSources, "", "rw");
    EXPECT_NE(namespace_stamp(config(), "0.1.0 a", {1, 2}, kSources, "", "rw,hidepid=invisible"),
              base)
        << "the node's /proc gained hidepid: jobs' /proc must follow";
    auto set = config();
    set.proc_options = "hidepid=noaccess";
    EXPECT_EQ(namespace_stamp(set, "0.1.0 a", {1, 2}, kSources, "", "rw"),
              namespace_stamp(set, "0.1.0 a", {1, 2}, kSources, "", "rw,hidepid=invisible"))
        << "proc= decides; the node's own /proc does not matter";
    EXPECT_NE(namespace_stamp(set, "0.1.0 a", {1, 2}, kSources, "", "rw"), base) << "proc= set";
}

namespace {

constexpr const char *kMountinfo =
    "22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
    "123 22 0:5 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
    "12 22 0:5 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw,hidepid=invisible,gid=27\n"
    "40 22 0:6 / /sys rw - sysfs sysfs rw\n";

} // namespace

TEST(ProcOptions, SuperOptionsOfOneMountById) {
    EXPECT_EQ(sjail::super_options_of_mount(kMountinfo, 123), "rw");
    EXPECT_EQ(sjail::super_options_of_mount(kMountinfo, 12), "rw,hidepid=invisible,gid=27")
        << "12 is not 123";
    EXPECT_EQ(sjail::super_options_of_mount(kMountinfo, 40), "rw");
    EXPECT_EQ(sjail::super_options_of_mount(kMountinfo, 7), std::nullopt);
    // Read so far only up to the middle of the line: not yet known.
    const std::string_view partial(kMountinfo);
    EXPECT_EQ(sjail::super_options_of_mount(partial.substr(0, partial.find("gid=27")), 12),
              std::nullopt);
    const auto options = sjail::proc_options_of("rw,hidepid=invisible,gid=27");
    EXPECT_EQ(options.hidepid, "invisible");
    EXPECT_EQ(options.gid, "27");
    EXPECT_EQ(options.subset, "");
    EXPECT_EQ(sjail::node_proc_options(kMountinfo), options) << "the last /proc mount";
}

TEST(NodeStamp, TheDigestIsStableAndTellsStampsApart) {
    EXPECT_EQ(sjail::stamp_digest(""), "fnv1a64:cbf29ce484222325");
    EXPECT_EQ(sjail::stamp_digest("a"), "fnv1a64:af63dc4c8601ec8c");
    EXPECT_NE(sjail::stamp_digest("source /run/munge 25:3 mnt 31\n"),
              sjail::stamp_digest("source /run/munge 25:3 mnt 32\n"));
}
