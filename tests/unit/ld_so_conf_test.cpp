// SPDX-License-Identifier: Apache-2.0
// Reading ld.so.conf the way glibc 2.36's ldconfig reads it.
#include "sjail/core/gpu/ld_so_conf.hpp"

#include <gtest/gtest.h>

using sjail::parse_ld_so_conf;
using Strings = std::vector<std::string>;

TEST(LdSoConf, DebianDefaultIsOneInclude) {
    const auto conf = parse_ld_so_conf("include /etc/ld.so.conf.d/*.conf\n\n", "/etc/ld.so.conf");
    EXPECT_EQ(conf.includes, Strings{"/etc/ld.so.conf.d/*.conf"});
    EXPECT_TRUE(conf.dirs.empty());
}

TEST(LdSoConf, DirectoriesCommentsAndWhitespace) {
    const auto conf = parse_ld_so_conf("# multiarch support\n"
                                       "/usr/local/lib/x86_64-linux-gnu\n"
                                       "   /lib/x86_64-linux-gnu   # trailing comment\n"
                                       "\t/usr/lib/x86_64-linux-gnu///\n"
                                       "/opt/old=libc6\n"
                                       "relative/dir\n"
                                       "#/commented/out\n"
                                       "   \n",
                                       "/etc/ld.so.conf.d/x86_64-linux-gnu.conf");
    EXPECT_EQ(conf.dirs, (Strings{"/usr/local/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                                  "/usr/lib/x86_64-linux-gnu", "/opt/old", "/relative/dir"}));
    EXPECT_TRUE(conf.includes.empty());
}

TEST(LdSoConf, IncludesSplitOnBlanksAndRelativeOnesFollowTheFile) {
    const auto conf = parse_ld_so_conf("include\t/etc/a/*.conf  more/*.conf b.conf\n",
                                       "/etc/ld.so.conf.d/site.conf");
    EXPECT_EQ(conf.includes, (Strings{"/etc/a/*.conf", "/etc/ld.so.conf.d/more/*.conf",
                                      "/etc/ld.so.conf.d/b.conf"}));
}

TEST(LdSoConf, HwcapLinesAreIgnoredAndKeywordsNeedABlank) {
    const auto conf = parse_ld_so_conf("hwcap 1 nosegneg\nHWCAP 0 x\ninclude_dir\n/includes\n",
                                       "/etc/ld.so.conf");
    // "include_dir" is no include (no blank after the keyword): a relative directory.
    EXPECT_EQ(conf.dirs, (Strings{"/include_dir", "/includes"}));
    EXPECT_TRUE(conf.includes.empty());
}

TEST(LdSoConf, NoTrailingNewline) {
    const auto conf = parse_ld_so_conf("/opt/a\n/opt/b", "/etc/ld.so.conf");
    EXPECT_EQ(conf.dirs, (Strings{"/opt/a", "/opt/b"}));
}
