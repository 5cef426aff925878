// SPDX-License-Identifier: Apache-2.0
// The text of one plugstack.conf file as Slurm reads it (core/plugstack.hpp):
// the one parser of pam_slurm_jail and slurm-jail-check.
#include "sjail/core/plugstack.hpp"

#include <gtest/gtest.h>

namespace sjail {
namespace {

using Args = std::vector<std::string>;

std::vector<PluginLine> plugins_of(const PlugstackText &parsed) {
    std::vector<PluginLine> out;
    for (const auto &entry : parsed.entries) {
        if (const auto *plugin = std::get_if<PluginLine>(&entry)) {
            out.push_back(*plugin);
        }
    }
    return out;
}

std::vector<std::string> includes_of(const PlugstackText &parsed) {
    std::vector<std::string> out;
    for (const auto &entry : parsed.entries) {
        if (const auto *include = std::get_if<IncludeLine>(&entry)) {
            out.push_back(include->pattern);
        }
    }
    return out;
}

TEST(Plugstack, FindsTheChrootLineAmongOthersWithCommentsAndIncludes) {
    const auto parsed = parse_plugstack("# site plugins\n"
                                        "optional /usr/lib/x/pyxis.so runtime_path=/run\n"
                                        "\n"
                                        "required\tchroot.so  jail=/mnt/jail bind=/opt # shared\n"
                                        "include plugstack.conf.d/*.conf\n"
                                        "include /etc/other/*.conf\n",
                                        "/etc/slurm/plugstack.conf");
    const auto plugins = plugins_of(parsed);
    ASSERT_EQ(plugins.size(), 2U);
    EXPECT_FALSE(loads_chroot(plugins[0]));
    const PluginLine &line = plugins[1];
    EXPECT_TRUE(loads_chroot(line));
    EXPECT_TRUE(line.required);
    EXPECT_EQ(line.origin, "/etc/slurm/plugstack.conf:4");
    EXPECT_EQ(line.args, (Args{"jail=/mnt/jail", "bind=/opt"}));
    EXPECT_EQ(includes_of(parsed),
              (Args{"/etc/slurm/plugstack.conf.d/*.conf", "/etc/other/*.conf"}));
    EXPECT_TRUE(parsed.notes.empty());
}

TEST(Plugstack, EntriesKeepTheFilesOrder) {
    const auto parsed = parse_plugstack("required a.so\ninclude d/*\nrequired z.so\n", "/s/p.conf");
    ASSERT_EQ(parsed.entries.size(), 3U);
    EXPECT_EQ(std::get<PluginLine>(parsed.entries[0]).plugin, "a.so");
    EXPECT_EQ(std::get<IncludeLine>(parsed.entries[1]), (IncludeLine{"/s/p.conf:2", "/s/d/*"}));
    EXPECT_EQ(std::get<PluginLine>(parsed.entries[2]).plugin, "z.so");
}

TEST(Plugstack, ReportsLinesSlurmIgnores) {
    const auto parsed = parse_plugstack("needed chroot.so jail=/j\nrequired\ninclude\n", "/p.conf");
    EXPECT_TRUE(parsed.entries.empty());
    ASSERT_EQ(parsed.notes.size(), 3U);
    EXPECT_EQ(parsed.notes[0].cause.rfind("/p.conf:1: ", 0), 0U) << parsed.notes[0].cause;
    EXPECT_EQ(parsed.notes[1].cause.rfind("/p.conf:2: ", 0), 0U) << parsed.notes[1].cause;
    EXPECT_EQ(parsed.notes[2].cause.rfind("/p.conf:3: ", 0), 0U) << parsed.notes[2].cause;
    EXPECT_NE(parsed.notes[2].fix.find("pattern"), std::string::npos);
}

TEST(Plugstack, KeywordsAreLowerCaseOnly) {
    const auto parsed = parse_plugstack("Include /etc/slurm/plugstack.conf.d/*\n"
                                        "REQUIRED chroot.so jail=/j\n",
                                        "/p.conf");
    EXPECT_TRUE(parsed.entries.empty());
    ASSERT_EQ(parsed.notes.size(), 2U);
    EXPECT_NE(parsed.notes[0].cause.find("\"Include\" is not a keyword"), std::string::npos);
    EXPECT_EQ(parsed.notes[0].fix, "write \"include\"");
    EXPECT_EQ(parsed.notes[1].fix, "write \"required\"");
}

TEST(Plugstack, AbsolutePluginPathsAndOptionalLines) {
    const auto plugins = plugins_of(parse_plugstack("optional /usr/lib/slurm/chroot.so jail=/j\n"
                                                    "required /usr/lib/slurm/notchroot.so\n",
                                                    "/p.conf"));
    ASSERT_EQ(plugins.size(), 2U);
    EXPECT_TRUE(loads_chroot(plugins[0]));
    EXPECT_FALSE(plugins[0].required);
    EXPECT_FALSE(loads_chroot(plugins[1]));
}

TEST(Plugstack, ChrootLinesInOrderLookalikesLeftOut) {
    const auto plugins = plugins_of(parse_plugstack("required notchroot.so\n"
                                                    "required /lib/mychroot.so\n"
                                                    "required chroot.so jail=/a\n"
                                                    "optional /x/chroot.so jail=/b\n",
                                                    "/p.conf"));
    const auto lines = chroot_lines(plugins);
    ASSERT_EQ(lines.size(), 2U);
    EXPECT_EQ(lines[0].origin, "/p.conf:3");
    EXPECT_EQ(lines[1].origin, "/p.conf:4");
}

TEST(Plugstack, IncludePatternIsRelativeToTheIncludingFilesDirectory) {
    EXPECT_EQ(include_pattern("plugstack.conf.d/*", "/etc/slurm/plugstack.conf"),
              "/etc/slurm/plugstack.conf.d/*");
    EXPECT_EQ(include_pattern("/opt/spank/*.conf", "/etc/slurm/plugstack.conf"),
              "/opt/spank/*.conf");
    EXPECT_EQ(include_pattern("../x.conf", "/etc/slurm/d/10.conf"), "/etc/slurm/d/../x.conf");
    // dirname(3), as Slurm uses it.
    EXPECT_EQ(include_pattern("x", "/p.conf"), "//x");
    EXPECT_EQ(include_pattern("x", "p.conf"), "./x");
    // Words after the pattern are ignored.
    const auto parsed = parse_plugstack("include d/*.conf more words\n", "/etc/slurm/p.conf");
    EXPECT_EQ(includes_of(parsed), Args{"/etc/slurm/d/*.conf"});
}

TEST(Plugstack, CarriageReturnIsPartOfAWord) {
    const auto parsed = parse_plugstack("required chroot.so jail=/j\r\n"
                                        "required chroot.so jail=/k # ok\r\n",
                                        "/p.conf");
    const auto plugins = plugins_of(parsed);
    ASSERT_EQ(plugins.size(), 2U);
    EXPECT_EQ(plugins[0].args, Args{"jail=/j\r"});
    EXPECT_EQ(plugins[1].args, Args{"jail=/k"});
    ASSERT_EQ(parsed.notes.size(), 1U);
    EXPECT_NE(parsed.notes[0].fix.find("dos2unix /p.conf"), std::string::npos);
}

TEST(Plugstack, LinesLongerThanSlurmsBufferAreSplit) {
    const std::string pad(kPlugstackLineMax - std::string("required a.so ").size(), 'x');
    const auto parsed =
        parse_plugstack("required a.so " + pad + "required b.so\nrequired c.so\n", "/p.conf");
    const auto plugins = plugins_of(parsed);
    ASSERT_EQ(plugins.size(), 3U);
    EXPECT_EQ(plugins[0].args, Args{pad});
    EXPECT_EQ(plugins[1].plugin, "b.so");
    EXPECT_EQ(plugins[1].origin, "/p.conf:2");
    EXPECT_EQ(plugins[2].origin, "/p.conf:3");
    ASSERT_EQ(parsed.notes.size(), 1U);
    EXPECT_NE(parsed.notes[0].cause.find("longer than 4095"), std::string::npos);
}

TEST(Plugstack, NoTrailingNewlineAndEmptyText) {
    EXPECT_EQ(plugins_of(parse_plugstack("required a.so", "/p.conf")).size(), 1U);
    EXPECT_TRUE(parse_plugstack("", "/p.conf").entries.empty());
}

TEST(Plugstack, CommandLineLineMayLeaveOutRequired) {
    std::string error;
    auto line = parse_plugin_line("chroot.so jail=/mnt/jail", error);
    ASSERT_TRUE(line.has_value()) << error;
    EXPECT_TRUE(line->required);
    EXPECT_EQ(line->plugin, "chroot.so");
    EXPECT_EQ(line->args, Args{"jail=/mnt/jail"});
    line = parse_plugin_line("optional chroot.so jail=/j", error);
    ASSERT_TRUE(line.has_value());
    EXPECT_FALSE(line->required);
    EXPECT_FALSE(parse_plugin_line("   ", error).has_value());
    EXPECT_FALSE(parse_plugin_line("include /x/*.conf", error).has_value());
    EXPECT_NE(error.find("include"), std::string::npos);
    EXPECT_FALSE(parse_plugin_line("required", error).has_value());
}

} // namespace
} // namespace sjail
