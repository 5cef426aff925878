// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/job/fuse_conn.hpp"

#include "sjail/core/mountinfo.hpp"

#include <charconv>
#include <optional>

namespace sjail {
namespace {

bool is_fuse_type(std::string_view type) {
    return type == "fuse" || type == "fuseblk" || type.starts_with("fuse.");
}

std::optional<std::uint64_t> number(std::string_view text, int base) {
    std::uint64_t value = 0;
    const auto *end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
    if (ec != std::errc() || ptr != end || text.empty()) {
        return std::nullopt;
    }
    return value;
}

// "MAJOR:MINOR" as the kernel's dev_t (MINORBITS is 20).
std::optional<std::uint64_t> kernel_dev(std::string_view field) {
    const auto colon = field.find(':');
    if (colon == std::string_view::npos) {
        return std::nullopt;
    }
    const auto major = number(field.substr(0, colon), 10);
    const auto minor = number(field.substr(colon + 1), 10);
    if (!major || !minor || *minor >= (1U << 20U)) {
        return std::nullopt;
    }
    return (*major << 20U) | *minor;
}

// The value of "Name:\t..." in a status text.
std::string_view status_field(std::string_view status, std::string_view name) {
    std::size_t at = 0;
    while (at < status.size()) {
        const std::size_t end = status.find('\n', at);
        const std::string_view line =
            status.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
        if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ':') {
            const std::size_t value = line.find_first_not_of(" \t", name.size() + 1);
            return value == std::string_view::npos ? std::string_view() : line.substr(value);
        }
        if (end == std::string_view::npos) {
            break;
        }
        at = end + 1;
    }
    return {};
}

bool sigkill_in(std::string_view mask) {
    constexpr std::uint64_t kSigkill = 1U << (9U - 1U);
    const auto bits = number(mask, 16);
    return bits && (*bits & kSigkill) != 0;
}

} // namespace

std::set<std::uint64_t> fuse_connections_of_mountinfo(std::string_view mountinfo) {
    std::set<std::uint64_t> found;
    std::size_t start = 0;
    while (start < mountinfo.size()) {
        std::size_t end = mountinfo.find('\n', start);
        if (end == std::string_view::npos) {
            end = mountinfo.size();
        }
        const auto line = parse_mountinfo_line(mountinfo.substr(start, end - start));
        start = end + 1;
        if (!line || line->head.size() < 3 || line->tail.empty() || !is_fuse_type(line->tail[0])) {
            continue;
        }
        if (const auto dev = kernel_dev(line->head[2])) {
            found.insert(*dev);
        }
    }
    return found;
}

bool is_stuck_dying(std::string_view status) {
    const std::string_view state = status_field(status, "State");
    if (state.empty() || (state[0] != 'D' && state[0] != 'Z')) {
        return false;
    }
    return sigkill_in(status_field(status, "ShdPnd")) || sigkill_in(status_field(status, "SigPnd"));
}

} // namespace sjail
