// SPDX-License-Identifier: Apache-2.0
// A file's identity as "DEV:INO" text, written and read back.
#include "sjail/core/file_id.hpp"

#include <gtest/gtest.h>

using sjail::file_id_text;
using sjail::FileId;
using sjail::parse_file_id;

TEST(FileId, TextIsDeviceColonInodeAndReadsBack) {
    const FileId id{.dev = 2049, .ino = 18446744073709551615ULL};
    EXPECT_EQ(file_id_text(id), "2049:18446744073709551615");
    EXPECT_EQ(parse_file_id(file_id_text(id)), id);
    EXPECT_EQ(parse_file_id("0:0"), FileId{});
}

TEST(FileId, AnythingButTwoDecimalNumbersIsRefused) {
    for (const char *text : {"", ":", "1:", ":1", "1", "1:2:3", "1:2 ", " 1:2", "-1:2", "1:+2",
                             "0x1:2", "1:18446744073709551616", "a:b"}) {
        EXPECT_EQ(parse_file_id(text), std::nullopt) << "'" << text << "'";
    }
}
