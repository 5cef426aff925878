// SPDX-License-Identifier: Apache-2.0
#include "finding.hpp"

#include <algorithm>

namespace sjail::check {
namespace {

std::string one_line(std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

std::string counted(std::size_t n, const std::string &noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

} // namespace

std::string format_finding(const Finding &finding) {
    const std::string label = finding.severity == Severity::Problem ? "PROBLEM" : "WARNING";
    return label + ": " + one_line(finding.cause) + " -- fix: " + one_line(finding.fix);
}

std::string summary_line(const std::vector<Finding> &findings) {
    const auto problems = static_cast<std::size_t>(
        std::count_if(findings.begin(), findings.end(),
                      [](const Finding &f) { return f.severity == Severity::Problem; }));
    const std::size_t warnings = findings.size() - problems;
    std::string line = problems == 0 ? "no problems found" : counted(problems, "problem");
    if (warnings > 0) {
        line += (problems == 0 ? " (" : ", ") + counted(warnings, "warning") +
                (problems == 0 ? ")" : "");
    }
    return line;
}

int exit_status(const std::vector<Finding> &findings) {
    return std::any_of(findings.begin(), findings.end(),
                       [](const Finding &f) { return f.severity == Severity::Problem; })
               ? 1
               : 0;
}

} // namespace sjail::check
