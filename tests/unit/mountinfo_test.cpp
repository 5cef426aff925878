// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/mountinfo.hpp"

#include <gtest/gtest.h>

using sjail::mountinfo_line_of;

namespace {

constexpr std::string_view kTable =
    "44 43 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
    "90 44 0:52 / /mnt/jail rw,nosuid - fuse.glusterfs storage:/jail rw,user_id=0\n";

} // namespace

TEST(Mountinfo, TheLineOfAMountIdSplitAtItsSeparator) {
    const auto line = mountinfo_line_of(kTable, 90);
    ASSERT_TRUE(line);
    ASSERT_EQ(line->head.size(), 6U);
    EXPECT_EQ(line->head[4], "/mnt/jail");
    ASSERT_EQ(line->tail.size(), 3U);
    EXPECT_EQ(line->tail[0], "fuse.glusterfs");
    EXPECT_EQ(line->tail[2], "rw,user_id=0");
    // Optional fields stay before the separator.
    EXPECT_EQ(mountinfo_line_of(kTable, 44)->head.size(), 7U);
}

TEST(Mountinfo, NothingForAnAbsentCutOrMalformedLine) {
    EXPECT_FALSE(mountinfo_line_of(kTable, 9));
    EXPECT_FALSE(mountinfo_line_of(kTable, 4)); // "44 ..." is not mount 4
    EXPECT_FALSE(mountinfo_line_of("90 44 0:52 / /mnt/jail rw - fuse x rw", 90));
    EXPECT_FALSE(mountinfo_line_of("90 44 0:52 / /mnt/jail rw fuse x rw\n", 90));
    EXPECT_FALSE(mountinfo_line_of("", 90));
}
