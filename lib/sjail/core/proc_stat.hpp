// SPDX-License-Identifier: Apache-2.0
// A process as /proc tells it: fields of /proc/PID/stat and /proc/PID/status
// read from their text, and how a process ended in words. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sjail {

// Field 22 (starttime) of a /proc/PID/stat line; the command name (field 2)
// may hold spaces and parentheses, so fields are counted after its last ')'.
std::optional<std::uint64_t> start_time_of_stat(std::string_view stat);

// Whether a /proc/PID/stat line is of a process that has ended and waits to
// be reaped (state Z or X). A job's init in that state has taken its PID
// namespace with it: no process can be born there any more.
bool has_ended_in_stat(std::string_view stat);

// Field 52 (exit_code, Linux 3.5 and later) of an ended process's stat line:
// how it ended, as waitpid(2) reports it.
std::optional<int> exit_code_of_stat(std::string_view stat);

// A waitpid(2) status in words: "killed by signal 9 (SIGKILL)", "exited with
// status 1".
std::string how_it_ended(int wait_status);

// Where a process's command line lies in its memory: arg_start and arg_end,
// fields 48 and 49 of /proc/PID/stat. A forked init overwrites it so that it
// is not shown (and not taken) for the daemon it was forked from.
struct ArgArea {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    bool operator==(const ArgArea &) const = default;
};
std::optional<ArgArea> arg_area_of_stat(std::string_view stat);

// The real uid on the "Uid:" line of a /proc/PID/status text.
std::optional<std::uint32_t> real_uid_of_status(std::string_view status);

} // namespace sjail
