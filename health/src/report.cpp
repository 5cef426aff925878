// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <fmt/format.h>

namespace sjh {
namespace {

std::string_view severity_name(Severity s) {
    return s == Severity::drain ? "drain" : "warn";
}

std::string label_escape(std::string_view v) {
    std::string out;
    for (const char c : v) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

} // namespace

std::string render_human(const Evaluation &e, const RunInfo &info) {
    std::string out;
    for (const auto &p : e.problems) {
        out += fmt::format("{} {}\n", p.severity == Severity::drain ? "DRAIN" : "WARN", p.message);
    }
    if (e.problems.empty()) {
        out +=
            fmt::format("OK {}: all GPU checks passed in {:.3f} s\n", info.node, info.duration_s);
    }
    return out;
}

nlohmann::json render_json(const Evaluation &e, const std::optional<NodeSnapshot> &snapshot,
                           const RunInfo &info) {
    nlohmann::json problems = nlohmann::json::array();
    for (const auto &p : e.problems) {
        problems.push_back({{"check", p.check},
                            {"gpu", p.gpu ? nlohmann::json(*p.gpu) : nlohmann::json(nullptr)},
                            {"severity", severity_name(p.severity)},
                            {"message", p.message}});
    }
    nlohmann::json checks = nlohmann::json::array();
    for (const auto &s : e.statuses) {
        checks.push_back({{"check", s.check},
                          {"gpu", s.gpu ? nlohmann::json(*s.gpu) : nlohmann::json(nullptr)},
                          {"ok", s.ok}});
    }
    nlohmann::json j{{"node", info.node},
                     {"verdict", e.must_drain() ? "fail" : "pass"},
                     {"duration_seconds", info.duration_s},
                     {"problems", problems},
                     {"checks", checks}};
    j["gpus"] = snapshot ? nlohmann::json(snapshot->gpus) : nlohmann::json::array();
    return j;
}

std::string render_metrics(const Evaluation &e, const RunInfo &info) {
    std::string out;
    out += "# HELP slurm_jail_gpu_check_ok 1 if the check found no problem, 0 otherwise.\n";
    out += "# TYPE slurm_jail_gpu_check_ok gauge\n";
    for (const auto &s : e.statuses) {
        out += fmt::format("slurm_jail_gpu_check_ok{{node=\"{}\",check=\"{}\",gpu=\"{}\"}} {}\n",
                           label_escape(info.node), s.check,
                           s.gpu ? std::to_string(*s.gpu) : std::string("node"), s.ok ? 1 : 0);
    }
    out += "# HELP slurm_jail_gpu_check_drain 1 if the quick check wants the node drained.\n";
    out += "# TYPE slurm_jail_gpu_check_drain gauge\n";
    out += fmt::format("slurm_jail_gpu_check_drain{{node=\"{}\"}} {}\n", label_escape(info.node),
                       e.must_drain() ? 1 : 0);
    out += "# HELP slurm_jail_gpu_check_duration_seconds Wall time of the quick check.\n";
    out += "# TYPE slurm_jail_gpu_check_duration_seconds gauge\n";
    out += fmt::format("slurm_jail_gpu_check_duration_seconds{{node=\"{}\"}} {:.6f}\n",
                       label_escape(info.node), info.duration_s);
    out += "# HELP slurm_jail_gpu_check_last_run_timestamp_seconds When the check last ran.\n";
    out += "# TYPE slurm_jail_gpu_check_last_run_timestamp_seconds gauge\n";
    out += fmt::format("slurm_jail_gpu_check_last_run_timestamp_seconds{{node=\"{}\"}} {:.3f}\n",
                       label_escape(info.node), info.timestamp_s);
    return out;
}

} // namespace sjh
