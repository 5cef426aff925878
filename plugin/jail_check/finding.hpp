// SPDX-License-Identifier: Apache-2.0
// What slurm-jail-check reports: one finding per problem, each with its fix,
// and the report's lines. Pure.
#pragma once

#include <string>
#include <vector>

namespace sjail::check {

enum class Severity {
    Problem, // a step would fail, or the jail is unsafe: exit status 1
    Warning, // jobs run, but something users expect will not work
};

struct Finding {
    Severity severity = Severity::Problem;
    std::string cause; // what is wrong, naming the path
    std::string fix;   // what to do about it

    bool operator==(const Finding &) const = default;
};

// "PROBLEM: CAUSE -- fix: FIX" (or "WARNING: ..."), one line.
std::string format_finding(const Finding &finding);

// "no problems found", "1 problem", "3 problems, 2 warnings", ...
std::string summary_line(const std::vector<Finding> &findings);

// 1 when any finding is a problem, else 0.
int exit_status(const std::vector<Finding> &findings);

} // namespace sjail::check
