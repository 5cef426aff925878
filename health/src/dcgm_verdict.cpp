// SPDX-License-Identifier: Apache-2.0
#include "dcgm_verdict.hpp"

#include "prometheus_text.hpp"
#include "text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace sjh {
namespace {

constexpr std::size_t kMaxQuoted = 200;

// The first non-blank line of dcgmi's output, shortened.
std::string first_line(std::string_view output) {
    for (const auto line : lines(output)) {
        const auto t = trim(line);
        if (!t.empty()) {
            return std::string(t.substr(0, kMaxQuoted));
        }
    }
    return "no output";
}

bool hostengine_unreachable(std::string_view output) {
    return output.find("Unable to connect to host engine") != std::string_view::npos ||
           output.find("unable to establish a connection") != std::string_view::npos;
}

std::string subject(const DcgmResult &r) {
    if (r.gpu) {
        return fmt::format("{} gpu {}", r.test, *r.gpu);
    }
    return r.entity.empty() ? r.test : fmt::format("{} {}", r.test, r.entity);
}

void judge_result(const DcgmResult &r, Evaluation &ev) {
    const auto detail = r.message.empty() ? std::string() : ": " + r.message;
    switch (r.status) {
    case DcgmStatus::fail:
        ev.problems.push_back(
            {"dcgm", r.gpu, Severity::drain, fmt::format("dcgm: {}: fail{}", subject(r), detail)});
        break;
    case DcgmStatus::warn:
        ev.problems.push_back(
            {"dcgm", r.gpu, Severity::warn, fmt::format("dcgm: {}: warn{}", subject(r), detail)});
        break;
    case DcgmStatus::unknown:
        ev.problems.push_back({"dcgm", r.gpu, Severity::warn,
                               fmt::format("dcgm: {}: unrecognised status '{}'{}", subject(r),
                                           r.status_text, detail)});
        break;
    case DcgmStatus::pass:
    case DcgmStatus::skip:
    case DcgmStatus::not_run:
        break;
    }
}

// Why the run gave no results, as (outcome, message); outcome empty when the
// output must be read.
std::pair<std::string, std::string> run_failure(const DcgmRun &run, const DcgmPolicy &p) {
    if (!run.found) {
        return {"missing", fmt::format("dcgm: dcgmi not found ({}): install DCGM or set "
                                       "dcgm-level = off",
                                       run.not_found)};
    }
    if (!run.started) {
        return {"exec_failed", fmt::format("dcgm: cannot run dcgmi: {}", run.exec_error)};
    }
    if (run.timed_out) {
        return {"timeout",
                fmt::format("dcgm: dcgmi diag -r {} did not finish within {:.1f} s and was "
                            "killed (hung GPU, driver or nv-hostengine, or a level too long for "
                            "--budget)",
                            p.level, p.timeout_s)};
    }
    if (run.signal != 0) {
        return {"killed",
                fmt::format("dcgm: dcgmi diag -r {} was killed by signal {}", p.level, run.signal)};
    }
    if (hostengine_unreachable(run.output)) {
        return {"no_hostengine",
                fmt::format("dcgm: nv-hostengine is not reachable (dcgmi: {}): start it "
                            "(nv-hostengine, or systemctl start nvidia-dcgm)",
                            first_line(run.output))};
    }
    return {};
}

int metric_value(DcgmStatus s) {
    switch (s) {
    case DcgmStatus::pass:
        return 1;
    case DcgmStatus::fail:
        return 0;
    case DcgmStatus::warn:
        return 2;
    case DcgmStatus::skip:
    case DcgmStatus::not_run:
        return 3;
    case DcgmStatus::unknown:
        break;
    }
    return 4;
}

std::string gpu_label(const DcgmResult &r) {
    if (r.gpu) {
        return std::to_string(*r.gpu);
    }
    return r.entity.empty() ? "node" : r.entity;
}

} // namespace

DcgmOutcome judge_dcgm(const DcgmRun &run, const DcgmPolicy &policy, Evaluation &ev) {
    const auto no_verdict = policy.required ? Severity::drain : Severity::warn;
    const auto before = ev.problems.size();
    DcgmOutcome out;
    if (auto [outcome, message] = run_failure(run, policy); !outcome.empty()) {
        out.outcome = outcome;
        ev.problems.push_back({"dcgm", std::nullopt, no_verdict, message});
    } else {
        try {
            auto report = parse_dcgm_diag(run.output);
            out.version = report.version;
            out.results = std::move(report.results);
            if (report.runtime_error) {
                out.outcome = "runtime_error";
                ev.problems.push_back(
                    {"dcgm", std::nullopt, no_verdict,
                     fmt::format("dcgm: the diagnostic did not run: {}", *report.runtime_error)});
            } else {
                out.outcome = "ok";
            }
        } catch (const std::invalid_argument &e) {
            out.outcome = "unreadable";
            ev.problems.push_back(
                {"dcgm", std::nullopt, no_verdict,
                 fmt::format("dcgm: dcgmi diag -r {} exited {} without a readable result ({}): {}",
                             policy.level, run.exit_code, e.what(), first_line(run.output))});
        }
        for (const auto &r : out.results) {
            judge_result(r, ev);
        }
        const bool failed = std::any_of(out.results.begin(), out.results.end(),
                                        [](const auto &r) { return r.status == DcgmStatus::fail; });
        if (out.outcome == "ok" && run.exit_code != 0 && !failed) {
            ev.problems.push_back({"dcgm", std::nullopt, no_verdict,
                                   fmt::format("dcgm: dcgmi diag -r {} exited {} although no "
                                               "test failed",
                                               policy.level, run.exit_code)});
        }
    }
    ev.statuses.push_back({"dcgm", std::nullopt, ev.problems.size() == before});
    return out;
}

std::string render_dcgm_metrics(const DcgmOutcome &o, const DcgmPolicy &policy,
                                const RunInfo &info) {
    const auto node = prometheus_label(info.node);
    std::string out = "# HELP slurm_jail_gpu_check_dcgm_result DCGM diagnostic result per test "
                      "and GPU: 1 pass, 0 fail, 2 warn, 3 skipped or not run, 4 unrecognised.\n";
    out += "# TYPE slurm_jail_gpu_check_dcgm_result gauge\n";
    for (const auto &r : o.results) {
        out += fmt::format("slurm_jail_gpu_check_dcgm_result{{node=\"{}\",test=\"{}\",gpu=\"{}\"}} "
                           "{}\n",
                           node, prometheus_label(r.test), prometheus_label(gpu_label(r)),
                           metric_value(r.status));
    }
    out += "# HELP slurm_jail_gpu_check_dcgm_level The DCGM diagnostic level the check ran.\n";
    out += "# TYPE slurm_jail_gpu_check_dcgm_level gauge\n";
    out += fmt::format("slurm_jail_gpu_check_dcgm_level{{node=\"{}\"}} {}\n", node, policy.level);
    out += "# HELP slurm_jail_gpu_check_dcgm_outcome 1 for how the dcgmi run ended (ok: results "
           "read).\n";
    out += "# TYPE slurm_jail_gpu_check_dcgm_outcome gauge\n";
    out += fmt::format("slurm_jail_gpu_check_dcgm_outcome{{node=\"{}\",outcome=\"{}\"}} 1\n", node,
                       o.outcome);
    return out;
}

nlohmann::json render_dcgm_json(const DcgmOutcome &o, const DcgmPolicy &policy) {
    nlohmann::json results = nlohmann::json::array();
    for (const auto &r : o.results) {
        results.push_back({{"category", r.category},
                           {"test", r.test},
                           {"gpu", r.gpu ? nlohmann::json(*r.gpu) : nlohmann::json(nullptr)},
                           {"entity", r.entity},
                           {"status", dcgm_status_name(r.status)},
                           {"message", r.message}});
    }
    return {{"level", policy.level},
            {"outcome", o.outcome},
            {"version", o.version},
            {"results", results}};
}

} // namespace sjh
