// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/node/jail_probe.hpp"

#include "sjail/core/mountinfo.hpp"
#include "sjail/core/whole_number.hpp"

namespace sjail {
namespace {

constexpr std::string_view kHeader = "jail-probe v1 ";

} // namespace

std::string format_probe_memo(const JailProbeMemo &memo) {
    return std::string(kHeader) + std::to_string(memo.at_s) + "\n";
}

std::optional<JailProbeMemo> parse_probe_memo(std::string_view text) {
    if (!text.starts_with(kHeader) || !text.ends_with('\n')) {
        return std::nullopt;
    }
    const std::string_view number = text.substr(kHeader.size(), text.size() - kHeader.size() - 1);
    const auto at_s = whole_number<decltype(JailProbeMemo::at_s)>(number);
    if (!at_s) {
        return std::nullopt;
    }
    return JailProbeMemo{.at_s = *at_s};
}

bool probe_due(const std::optional<JailProbeMemo> &memo, std::int64_t now_s, int recheck_s) {
    return !memo || recheck_s <= 0 || memo->at_s > now_s || now_s - memo->at_s >= recheck_s;
}

std::optional<std::string> describe_mount(std::string_view mountinfo, std::uint64_t mount_id) {
    const auto line = mountinfo_line_of(mountinfo, mount_id);
    if (!line || line->head.size() < 5 || line->tail.size() < 2) {
        return std::nullopt;
    }
    return std::string(line->tail[0]) + " " + std::string(line->tail[1]) + " mounted at " +
           std::string(line->head[4]);
}

} // namespace sjail
