// SPDX-License-Identifier: Apache-2.0
// The protocol between the plugin and the process that builds the node's jail
// namespace. Pure: the builder writes one line, the caller judges it together
// with how the builder ended. Anything but an explicit, matching success
// token is a failure, and a failed build is never kept.
#pragma once

#include "sjail/core/file_id.hpp"
#include "sjail/core/status.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace sjail {

// How the builder process ended.
struct BuilderEnd {
    enum class Kind { Exited, Signaled, TimedOut } kind = Kind::Exited;
    int code = 0;      // exit status or signal number
    int timeout_s = 0; // the deadline, for the message
};

// The builder's last words: exactly one line.
std::string builder_success_line(const FileId &root);
std::string builder_failure_line(std::string_view message);

// Ok only when the builder said "ok" with a root equal to `jail`, exited
// with status 0 and did not run past its deadline.
Status judge_builder(std::string_view report, const BuilderEnd &end, const FileId &jail);

// The same protocol for the process that makes a job's namespaces: its
// success token names the job's init (its pid in the node's PID namespace).
std::string job_creator_success_line(std::int64_t init_pid);
bool job_creator_claims_success(std::string_view report);
Status judge_job_creator(std::string_view report, const BuilderEnd &end, std::int64_t &init_pid);

} // namespace sjail
