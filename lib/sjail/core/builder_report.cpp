// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/builder_report.hpp"

#include "sjail/core/whole_number.hpp"

namespace sjail {
namespace {

constexpr std::string_view kOk = "sjail-builder ok root=";
constexpr std::string_view kError = "sjail-builder error ";
constexpr std::string_view kJobOk = "sjail-job ok init=";

std::string describe_end(const BuilderEnd &end) {
    switch (end.kind) {
    case BuilderEnd::Kind::TimedOut:
        return "did not finish within " + std::to_string(end.timeout_s) +
               " s and was killed (a hung jail filesystem?); raise build_timeout= only if the "
               "jail is known to be slow";
    case BuilderEnd::Kind::Signaled:
        return "was killed by signal " + std::to_string(end.code);
    case BuilderEnd::Kind::Exited:
        break;
    }
    return "exited with status " + std::to_string(end.code);
}

} // namespace

std::string builder_success_line(const FileId &root) {
    return std::string(kOk) + file_id_text(root) + "\n";
}

std::string builder_failure_line(std::string_view message) {
    std::string line(kError);
    for (const char c : message) {
        line += c == '\n' ? ' ' : c; // one line, whatever the message holds
    }
    return line + "\n";
}

namespace {

// The one line of a report, or a failure: timed out, incomplete, or the
// builder's own error.
Status report_line(std::string_view report, const BuilderEnd &end, const std::string &prefix,
                   std::string_view &line) {
    if (end.kind == BuilderEnd::Kind::TimedOut) {
        return Status::failure(prefix + "the builder " + describe_end(end));
    }
    if (report.empty() || report.back() != '\n' || report.find('\n') != report.size() - 1) {
        return Status::failure(prefix + "the builder reported no complete result and " +
                               describe_end(end));
    }
    line = report.substr(0, report.size() - 1);
    if (line.substr(0, kError.size()) == kError) {
        return Status::failure(std::string(line.substr(kError.size())));
    }
    return {};
}

} // namespace

Status judge_builder(std::string_view report, const BuilderEnd &end, const FileId &jail) {
    const std::string prefix = "building the jail namespace failed: ";
    std::string_view line;
    if (auto s = report_line(report, end, prefix, line); !s.ok()) {
        return s;
    }
    const auto root = line.starts_with(kOk) ? parse_file_id(line.substr(kOk.size())) : std::nullopt;
    if (!root) {
        return Status::failure(prefix + "the builder's report is not understood: '" +
                               std::string(line) + "'");
    }
    if (!(*root == jail)) {
        return Status::failure(prefix + "the builder's root is not the jail (pivot_root into "
                                        "the jail did not happen)");
    }
    if (end.kind != BuilderEnd::Kind::Exited || end.code != 0) {
        return Status::failure(prefix + "the builder reported success but " + describe_end(end));
    }
    return {};
}

std::string job_creator_success_line(std::int64_t init_pid) {
    return std::string(kJobOk) + std::to_string(init_pid) + "\n";
}

bool job_creator_claims_success(std::string_view report) {
    return report.substr(0, kJobOk.size()) == kJobOk;
}

Status judge_job_creator(std::string_view report, const BuilderEnd &end, std::int64_t &init_pid) {
    const std::string prefix = "making the job's namespaces failed: ";
    std::string_view line;
    if (auto s = report_line(report, end, prefix, line); !s.ok()) {
        return s;
    }
    const auto pid = job_creator_claims_success(line)
                         ? whole_number<std::uint64_t>(line.substr(kJobOk.size()))
                         : std::nullopt;
    if (!pid || *pid == 0) {
        return Status::failure(prefix + "the report is not understood: '" + std::string(line) +
                               "'");
    }
    if (end.kind != BuilderEnd::Kind::Exited || end.code != 0) {
        return Status::failure(prefix + "the builder reported success but " + describe_end(end));
    }
    init_pid = static_cast<std::int64_t>(*pid);
    return {};
}

} // namespace sjail
