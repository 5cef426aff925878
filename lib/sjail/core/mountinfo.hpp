// SPDX-License-Identifier: Apache-2.0
// One line of /proc/PID/mountinfo (proc_pid_mountinfo(5)), found by its
// mount ID. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace sjail {

// The line's fields before its " - " separator (mount ID, parent ID,
// major:minor, root, mount point, mount options, optional fields) and after
// it (filesystem type, source, super options).
struct MountinfoLine {
    std::vector<std::string_view> head;
    std::vector<std::string_view> tail;
};

// One line split; nothing when it has no separator.
std::optional<MountinfoLine> parse_mountinfo_line(std::string_view line);

// The line of `mount_id` in `mountinfo`; nothing when there is none, when
// it is the last and cut short (no newline), or when it has no separator.
std::optional<MountinfoLine> mountinfo_line_of(std::string_view mountinfo, std::uint64_t mount_id);

} // namespace sjail
