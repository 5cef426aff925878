// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/mountinfo.hpp"

#include "sjail/core/path_rules.hpp"

#include <string>

namespace sjail {

std::optional<MountinfoLine> parse_mountinfo_line(std::string_view line) {
    const auto dash = line.find(" - ");
    if (dash == std::string_view::npos) {
        return std::nullopt;
    }
    return MountinfoLine{split(line.substr(0, dash), ' '), split(line.substr(dash + 3), ' ')};
}

std::optional<MountinfoLine> mountinfo_line_of(std::string_view mountinfo, std::uint64_t mount_id) {
    const std::string id = std::to_string(mount_id) + " ";
    std::size_t start = 0;
    while (start < mountinfo.size()) {
        const std::size_t end = mountinfo.find('\n', start);
        if (end == std::string_view::npos) {
            return std::nullopt; // an incomplete last line
        }
        const std::string_view line = mountinfo.substr(start, end - start);
        start = end + 1;
        if (line.starts_with(id)) {
            return parse_mountinfo_line(line);
        }
    }
    return std::nullopt;
}

} // namespace sjail
