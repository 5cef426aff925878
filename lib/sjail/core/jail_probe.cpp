// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/jail_probe.hpp"

#include "sjail/core/path_rules.hpp"

#include <charconv>
#include <vector>

namespace sjail {
namespace {

constexpr std::string_view kHeader = "jail-probe v1 ";

std::string_view next_line(std::string_view text, std::size_t &start) {
    const std::size_t end = text.find('\n', start);
    const std::string_view line =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    start = end == std::string_view::npos ? text.size() : end + 1;
    return line;
}

} // namespace

std::string format_probe_memo(const JailProbeMemo &memo) {
    return std::string(kHeader) + std::to_string(memo.at_s) + "\n";
}

std::optional<JailProbeMemo> parse_probe_memo(std::string_view text) {
    if (!text.starts_with(kHeader) || !text.ends_with('\n')) {
        return std::nullopt;
    }
    const std::string_view number = text.substr(kHeader.size(), text.size() - kHeader.size() - 1);
    JailProbeMemo memo;
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), memo.at_s);
    if (number.empty() || ec != std::errc() || ptr != number.data() + number.size()) {
        return std::nullopt;
    }
    return memo;
}

bool probe_due(const std::optional<JailProbeMemo> &memo, std::int64_t now_s, int recheck_s) {
    return !memo || recheck_s <= 0 || memo->at_s > now_s || now_s - memo->at_s >= recheck_s;
}

std::optional<std::string> describe_mount(std::string_view mountinfo, std::uint64_t mount_id) {
    const std::string id = std::to_string(mount_id) + " ";
    std::size_t start = 0;
    while (start < mountinfo.size()) {
        const std::string_view line = next_line(mountinfo, start);
        if (!line.starts_with(id)) {
            continue;
        }
        const auto head = split(line, ' ');
        const auto dash = line.find(" - ");
        if (head.size() < 5 || dash == std::string_view::npos) {
            return std::nullopt;
        }
        const auto tail = split(line.substr(dash + 3), ' ');
        if (tail.size() < 2) {
            return std::nullopt;
        }
        return std::string(tail[0]) + " " + std::string(tail[1]) + " mounted at " +
               std::string(head[4]);
    }
    return std::nullopt;
}

} // namespace sjail
