// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/node/node_watch.hpp"

#include "sjail/core/path_rules.hpp"
#include "sjail/core/whole_number.hpp"

#include <algorithm>
#include <map>

namespace sjail {
namespace {

constexpr std::string_view kWatchHeader = "sjail-watch 1\n";
constexpr std::string_view kArmedHeader = "sjail-armed 1\n";
constexpr std::string_view kStampLine = "stamp\n";

template <typename Number> bool parse_number(std::string_view text, Number &out) {
    const auto number = whole_number<Number>(text);
    if (number) {
        out = *number;
    }
    return number.has_value();
}

// Takes the line "KEY VALUE\n" off the front of `text`.
bool take_line(std::string_view &text, std::string_view key, std::string_view &value) {
    const std::size_t nl = text.find('\n');
    if (nl == std::string_view::npos || !text.starts_with(key) || text.size() <= key.size() ||
        text[key.size()] != ' ') {
        return false;
    }
    value = text.substr(key.size() + 1, nl - key.size() - 1);
    text.remove_prefix(nl + 1);
    return true;
}

template <typename Number>
bool take_number(std::string_view &text, std::string_view key, Number &out) {
    std::string_view value;
    return take_line(text, key, value) && parse_number(value, out);
}

std::string watch_lines(const WatchRecord &record) {
    return "pid " + std::to_string(record.pid) + "\ninotify " + std::to_string(record.inotify_fd) +
           "\nfanotify " + std::to_string(record.fanotify_fd) + "\nmntns " +
           std::to_string(record.mount_ns) + "\n";
}

bool take_watch_lines(std::string_view &text, WatchRecord &record) {
    return take_number(text, "pid", record.pid) && record.pid > 0 &&
           take_number(text, "inotify", record.inotify_fd) && record.inotify_fd >= 0 &&
           take_number(text, "fanotify", record.fanotify_fd) && record.fanotify_fd >= 0 &&
           take_number(text, "mntns", record.mount_ns);
}

bool take_file_id(std::string_view &text, std::string_view key, FileId &id) {
    std::string_view value;
    if (!take_line(text, key, value)) {
        return false;
    }
    const auto parsed = parse_file_id(value);
    if (parsed) {
        id = *parsed;
    }
    return parsed.has_value();
}

} // namespace

std::string format_watch_record(const WatchRecord &record) {
    return std::string(kWatchHeader) + watch_lines(record);
}

std::optional<WatchRecord> parse_watch_record(std::string_view text) {
    WatchRecord record;
    if (!text.starts_with(kWatchHeader)) {
        return std::nullopt;
    }
    text.remove_prefix(kWatchHeader.size());
    if (!take_watch_lines(text, record) || !text.empty()) {
        return std::nullopt;
    }
    return record;
}

std::string format_armed_token(const ArmedToken &token) {
    return std::string(kArmedHeader) + watch_lines(token.watch) + "until " +
           std::to_string(token.until_s) + "\nroot " + std::to_string(token.root_mount) +
           "\nplugin " + token.plugin + "\nsettings " + token.settings + "\njail " +
           file_id_text(token.jail) + "\n" + std::string(kStampLine) + token.stamp;
}

std::optional<ArmedToken> parse_armed_token(std::string_view text) {
    ArmedToken token;
    std::string_view plugin;
    std::string_view settings;
    if (!text.starts_with(kArmedHeader)) {
        return std::nullopt;
    }
    text.remove_prefix(kArmedHeader.size());
    if (!take_watch_lines(text, token.watch) || !take_number(text, "until", token.until_s) ||
        !take_number(text, "root", token.root_mount) || !take_line(text, "plugin", plugin) ||
        !take_line(text, "settings", settings) || !take_file_id(text, "jail", token.jail) ||
        !text.starts_with(kStampLine)) {
        return std::nullopt;
    }
    token.plugin = plugin;
    token.settings = settings;
    token.stamp = text.substr(kStampLine.size());
    return token;
}

bool token_current(const ArmedToken &token, const StepView &step, int recheck_s) {
    return token.plugin == step.plugin && token.settings == step.settings &&
           token.root_mount == step.root_mount && step.now_s < token.until_s &&
           token.until_s - step.now_s <= recheck_s;
}

std::int64_t armed_until(const std::optional<JailProbeMemo> &memo, std::int64_t now_s,
                         int recheck_s) {
    if (probe_due(memo, now_s, recheck_s)) {
        return 0;
    }
    return memo->at_s + recheck_s;
}

std::vector<WatchPath> watches_for(const std::vector<std::string> &checked,
                                   const std::string &own_dir,
                                   const std::vector<std::string> &closed_paths) {
    const auto own = [&own_dir](const std::string &dir) {
        return !own_dir.empty() && is_same_or_below(dir, own_dir);
    };
    std::map<std::string, WatchPath> by_path;
    for (const auto &path : checked) {
        if (!path.starts_with('/')) {
            continue;
        }
        auto &self = by_path[path];
        self.path = path;
        self.self = true;
        for (std::string dir = path; dir != "/";) {
            dir = parent_dir(dir);
            if (own(dir)) {
                continue;
            }
            auto &above = by_path[dir];
            above.path = dir;
            above.entries = true;
        }
    }
    for (const auto &closed : closed_paths) {
        for (std::string dir = closed; closed.starts_with('/') && dir != "/";) {
            dir = parent_dir(dir);
            if (auto it = by_path.find(dir); it != by_path.end()) {
                it->second.modes = true;
            }
        }
    }
    std::vector<WatchPath> out;
    out.reserve(by_path.size());
    for (auto &[path, watch] : by_path) {
        out.push_back(std::move(watch));
    }
    return out;
}

} // namespace sjail
