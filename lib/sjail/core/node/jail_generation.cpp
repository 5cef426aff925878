// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/node/jail_generation.hpp"

#include "sjail/core/node/jail_policy.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/core/whole_number.hpp"

#include <algorithm>

namespace sjail {
namespace {

bool allowed_in_data_path(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("._+-@/").find(c) != std::string_view::npos;
}

// The key of one line: generation, previous or data; anything else fails.
Status take_line(std::string_view file, std::string_view line, LiveGeneration &out,
                 bool &have_generation) {
    const auto eq = line.find('=');
    const std::string_view key = line.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : line.substr(eq + 1);
    const std::string where = std::string(file) + ": '" + std::string(line) + "'";
    if (key == "generation" || key == "previous") {
        const auto n = parse_generation_number(value);
        if (!n) {
            return Status::failure(where + ": " + std::string(key) +
                                   "= takes a generation number (1 or more)");
        }
        if (key == "generation") {
            if (have_generation) {
                return Status::failure(where + ": generation= is given twice");
            }
            have_generation = true;
            out.generation = *n;
        } else {
            if (out.previous) {
                return Status::failure(where + ": previous= is given twice");
            }
            out.previous = n;
        }
        return {};
    }
    if (key == "data") {
        if (auto s = check_data_path(value); !s.ok()) {
            return Status::failure(std::string(file) + ": " + s.message());
        }
        out.data.emplace_back(value);
        return {};
    }
    return Status::failure(where + ": not generation=, previous= or data=");
}

Status check_data_set(std::string_view file, const std::vector<std::string> &data) {
    for (const auto &a : data) {
        for (const auto &b : data) {
            if (&a != &b && is_same_or_below(a, b)) {
                return Status::failure(std::string(file) + ": data=" + a +
                                       (a == b ? " is given twice" : " lies below data=" + b) +
                                       "; list each tree of the users' data once");
            }
        }
    }
    if (std::find(data.begin(), data.end(), "/home") == data.end()) {
        return Status::failure(std::string(file) + ": has no data=/home; the users' homes are "
                                                   "always their data");
    }
    return {};
}

} // namespace

std::optional<std::uint64_t> parse_generation_number(std::string_view text) {
    if (text.starts_with('0')) {
        return std::nullopt;
    }
    return whole_number<std::uint64_t>(text);
}

LiveMemo parse_live_memo(std::string_view memo) {
    LiveMemo out;
    const auto first = memo.find('\n');
    const auto second = first == std::string_view::npos ? first : memo.find('\n', first + 1);
    if (second == std::string_view::npos || !memo.starts_with("at=")) {
        return out;
    }
    const std::string_view head = memo.substr(3, first - 3);
    const auto space = head.find(' ');
    if (space == std::string_view::npos) {
        return out;
    }
    out.at_s = whole_number<std::int64_t>(head.substr(0, space)).value_or(-1);
    out.volume = head.substr(space + 1);
    out.key = memo.substr(first + 1, second - first - 1);
    out.text = memo.substr(second + 1);
    return out;
}

Status check_data_path(std::string_view path) {
    const std::string shown = "data=" + std::string(path);
    if (auto s = check_absolute_path("data", path); !s.ok()) {
        return s;
    }
    if (path == "/") {
        return Status::failure(shown + ": the whole jail cannot be the users' data");
    }
    if (!std::all_of(path.begin(), path.end(), allowed_in_data_path)) {
        return Status::failure(shown + ": a data path holds only letters, digits and ._+-@/");
    }
    if (is_same_or_below(path, "/" + std::string(kJailStateDir))) {
        return Status::failure(shown + ": /" + std::string(kJailStateDir) +
                               " is populate-jail's own state");
    }
    for (const auto &system : jail_system_paths()) {
        if (system != "/" && (is_same_or_below(path, system) || is_same_or_below(system, path))) {
            return Status::failure(shown + ": root on the node reads " + system +
                                   " from the jail, so it cannot be (or hold, or lie in) "
                                   "the users' data");
        }
    }
    return {};
}

Status parse_live_generation(std::string_view file, std::string_view text, LiveGeneration &out) {
    out = {};
    if (text.size() > kLiveFileMax) {
        return Status::failure(std::string(file) + ": larger than " + std::to_string(kLiveFileMax) +
                               " bytes");
    }
    bool have_generation = false;
    for (std::string_view line : split(text, '\n')) {
        if (line.empty() || line.starts_with('#')) {
            continue;
        }
        if (auto s = take_line(file, line, out, have_generation); !s.ok()) {
            return s;
        }
    }
    if (!have_generation) {
        return Status::failure(std::string(file) + ": names no generation= (an interrupted "
                                                   "write is never seen: populate-jail renames "
                                                   "the file into place)");
    }
    if (out.previous == out.generation) {
        return Status::failure(std::string(file) + ": previous= is the live generation itself");
    }
    return check_data_set(file, out.data);
}

std::string format_live_generation(const LiveGeneration &live) {
    std::string text =
        "# slurm-jail: the live generation (written by populate-jail; do not edit)\n";
    text += "generation=" + std::to_string(live.generation) + "\n";
    if (live.previous) {
        text += "previous=" + std::to_string(*live.previous) + "\n";
    }
    for (const auto &path : live.data) {
        text += "data=" + path + "\n";
    }
    return text;
}

std::string generation_dir(std::uint64_t generation) {
    return "generations/" + std::to_string(generation);
}

} // namespace sjail
