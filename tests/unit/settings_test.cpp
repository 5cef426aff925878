// SPDX-License-Identifier: Apache-2.0
// The settings table: its rows agree with Config's defaults, with the
// fingerprint, and with the settings tables of the README and chroot.so(8).
#include "sjail/core/config.hpp"
#include "sjail/core/fingerprint.hpp"
#include "sjail/core/parse_config.hpp"
#include "sjail/core/settings.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

using sjail::parse_config;
using sjail::settings;

namespace {

std::string read_source_file(const std::string &relative) {
    std::ifstream in(std::string(SJAIL_SOURCE_DIR) + "/" + relative);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_starting(const std::string &text, const std::string &prefix) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(prefix, 0) == 0) {
            out.push_back(line);
        }
    }
    return out;
}

// An entry of chroot.so(8) gives DEFAULT as its default, in one of the forms
// the page uses: "Default 30", "Default\n.IR /run/munge", ".B auto\n(the default)".
bool gives_default(const std::string &entry, std::string_view value) {
    const std::string v(value);
    return entry.find("Default " + v) != std::string::npos ||
           entry.find("Default\n.IR " + v) != std::string::npos ||
           entry.find(".B " + v + "\n(the default)") != std::string::npos ||
           entry.find(".B " + v + "\n(default)") != std::string::npos;
}

std::string setting_arg(const sjail::Setting &setting, std::string_view value) {
    return std::string(setting.name) + "=" + std::string(value);
}

} // namespace

TEST(Settings, EachNameOnceAndFoundByName) {
    std::set<std::string_view> names;
    for (const auto &setting : settings()) {
        EXPECT_TRUE(names.insert(setting.name).second) << setting.name;
        EXPECT_EQ(sjail::find_setting(setting.name), &setting);
        EXPECT_NE(setting.apply, nullptr) << setting.name;
    }
    EXPECT_EQ(sjail::find_setting("no_such_setting"), nullptr);
    EXPECT_GE(names.size(), 18U);
}

TEST(Settings, OnlyBindRepeats) {
    for (const auto &setting : settings()) {
        EXPECT_EQ(setting.repeatable, setting.name == "bind") << setting.name;
    }
}

TEST(Settings, WritingTheDefaultChangesNothing) {
    const auto base = parse_config({"jail=/j"});
    ASSERT_TRUE(base.status.ok()) << base.status.message();
    for (const auto &setting : settings()) {
        if (setting.default_value.empty()) {
            continue;
        }
        const auto given = parse_config({"jail=/j", setting_arg(setting, setting.default_value)});
        ASSERT_TRUE(given.status.ok()) << setting.name << ": " << given.status.message();
        EXPECT_TRUE(given.config == base.config) << setting.name;
    }
}

TEST(Settings, OnlyThoseThatShapeTheViewChangeTheFingerprint) {
    const auto base = sjail::fingerprint(parse_config({"jail=/j"}).config);
    const std::vector<std::string> not_shaping = {
        "state=/run/other",  "allow_opt_out=root", "job_tmp=node", "job_tmp_size=1g",
        "job_shm_size=512m", "build_timeout=5",    "recheck=0"};
    for (const auto &arg : not_shaping) {
        const auto parsed = parse_config({"jail=/j", arg});
        ASSERT_TRUE(parsed.status.ok()) << arg << ": " << parsed.status.message();
        EXPECT_EQ(sjail::fingerprint(parsed.config), base) << arg;
        const auto *setting = sjail::find_setting(arg.substr(0, arg.find('=')));
        ASSERT_NE(setting, nullptr) << arg;
        EXPECT_FALSE(setting->shapes_view()) << arg;
    }
}

TEST(Settings, TheHintNamesEverySetting) {
    const auto message = parse_config({"jail=/j", "x=1"}).status.message();
    const auto list = message.substr(message.find("(jail="));
    for (const auto &setting : settings()) {
        const std::string key = std::string(setting.name) + "=";
        EXPECT_TRUE(list.find(" " + key) != std::string::npos ||
                    list.find("(" + key) != std::string::npos)
            << setting.name << " missing from: " << message;
    }
}

// The README's table of chroot.so's settings: a row per key, its default as
// written when it has one.
TEST(SettingsDocs, TheReadmeTableListsEveryKeyWithItsDefault) {
    const auto rows = lines_starting(read_source_file("README.md"), "| `");
    for (const auto &setting : settings()) {
        const std::string key = "| `" + std::string(setting.name) + "=";
        const std::string *row = nullptr;
        for (const auto &line : rows) {
            if (line.rfind(key, 0) == 0) {
                row = &line;
            }
        }
        ASSERT_NE(row, nullptr) << "README.md's settings table has no row for " << setting.name
                                << "=";
        if (!setting.default_value.empty()) {
            EXPECT_NE(row->find("| `" + std::string(setting.default_value) + "` |"),
                      std::string::npos)
                << "README.md gives another default for " << setting.name << "=: " << *row;
        }
    }
}

// chroot.so(8)'s SETTINGS section: an entry per key, and its default.
TEST(SettingsDocs, TheManPageListsEveryKeyWithItsDefault) {
    const auto page = read_source_file("plugin/chroot/man/chroot.so.8");
    const auto section = page.substr(page.find(".SH SETTINGS"));
    const auto end = section.find("\n.SH ", 1);
    const auto settings_text = section.substr(0, end);
    for (const auto &setting : settings()) {
        const std::string name(setting.name);
        auto at = settings_text.find(".TP\n.BI " + name + "=");
        if (at == std::string::npos) {
            at = settings_text.find(".TP\n.BR " + name + "=");
        }
        ASSERT_NE(at, std::string::npos)
            << "chroot.so(8) SETTINGS has no entry for " << name << "=";
        if (!setting.default_value.empty()) {
            // The entry's text, below the line that names the key and its values.
            const auto body = settings_text.find('\n', at + 4);
            const auto next = settings_text.find(".TP\n", body);
            const auto entry = settings_text.substr(body, next - body);
            EXPECT_TRUE(gives_default(entry, setting.default_value))
                << "chroot.so(8) does not give " << name << "='s default " << setting.default_value;
        }
    }
}

// The Helm chart's schema lets plugin.extraArgs name every setting but
// jail= (the chart sets it): one pattern, "^(bind|munge|...)=".
TEST(SettingsDocs, TheChartSchemaTakesEverySettingButTheJail) {
    const auto schema = read_source_file("helm/slurm-cluster/values.schema.json");
    const auto plugin = schema.find("\"plugin\": {");
    ASSERT_NE(plugin, std::string::npos);
    const std::string open = "\"pattern\": \"^(";
    const auto start = schema.find(open, plugin);
    ASSERT_NE(start, std::string::npos);
    const auto first = start + open.size();
    const auto keys = "|" + schema.substr(first, schema.find(")=", first) - first) + "|";
    for (const auto &setting : settings()) {
        const std::string name(setting.name);
        EXPECT_EQ(keys.find("|" + name + "|") != std::string::npos, name != "jail")
            << "plugin.extraArgs' pattern in values.schema.json and " << name << "=: " << keys;
    }
}
