// SPDX-License-Identifier: Apache-2.0
#include "text.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

using Parts = std::vector<std::string_view>;

TEST(Text, SplitKeepsEmptyParts) {
    EXPECT_EQ(split("a,,b", ','), (Parts{"a", "", "b"}));
    EXPECT_EQ(split("", ','), (Parts{""}));
    EXPECT_EQ(split("IDLE+DRAIN", '+'), (Parts{"IDLE", "DRAIN"}));
    EXPECT_EQ(split("/usr/bin:/bin:", ':'), (Parts{"/usr/bin", "/bin", ""}));
}

TEST(Text, LinesEndAtNewlines) {
    EXPECT_EQ(lines("a\nb\n"), (Parts{"a", "b"}));
    EXPECT_EQ(lines("a\n\nb"), (Parts{"a", "", "b"}));
    EXPECT_EQ(lines("\n"), (Parts{""}));
    EXPECT_TRUE(lines("").empty());
}

TEST(Text, TrimRemovesBlanksAtBothEnds) {
    EXPECT_EQ(trim(" \t48 \r\n"), "48");
    EXPECT_EQ(trim("a b"), "a b");
    EXPECT_EQ(trim(" \t"), "");
}

} // namespace
} // namespace sjh
