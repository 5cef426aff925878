// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include "prometheus_text.hpp"

#include <fmt/format.h>

namespace sjh {
namespace {

std::string_view severity_name(Severity s) {
    return s == Severity::drain ? "drain" : "warn";
}

template <typename T> nlohmann::json json_or_null(const std::optional<T> &v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// One gauge family: its HELP and TYPE lines, then a sample for each port that has a value.
template <typename ValueOf>
std::string ib_port_gauge(const std::vector<IbPortReading> &ports, const RunInfo &info,
                          std::string_view name, std::string_view help, ValueOf value_of) {
    std::string out = fmt::format("# HELP slurm_jail_gpu_check_{} {}\n", name, help);
    out += fmt::format("# TYPE slurm_jail_gpu_check_{} gauge\n", name);
    for (const auto &p : ports) {
        if (const auto value = value_of(p)) {
            out += fmt::format(
                "slurm_jail_gpu_check_{}{{node=\"{}\",port=\"{}\",link_layer=\"{}\"}} {}\n", name,
                prometheus_label(info.node), prometheus_label(p.name),
                prometheus_label(p.link_layer), *value);
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
                           prometheus_label(info.node), s.check,
                           s.gpu ? std::to_string(*s.gpu) : std::string("node"), s.ok ? 1 : 0);
    }
    out += "# HELP slurm_jail_gpu_check_drain 1 if the quick check wants the node drained.\n";
    out += "# TYPE slurm_jail_gpu_check_drain gauge\n";
    out += fmt::format("slurm_jail_gpu_check_drain{{node=\"{}\"}} {}\n",
                       prometheus_label(info.node), e.must_drain() ? 1 : 0);
    out += "# HELP slurm_jail_gpu_check_duration_seconds Wall time of the quick check.\n";
    out += "# TYPE slurm_jail_gpu_check_duration_seconds gauge\n";
    out += fmt::format("slurm_jail_gpu_check_duration_seconds{{node=\"{}\"}} {:.6f}\n",
                       prometheus_label(info.node), info.duration_s);
    out += "# HELP slurm_jail_gpu_check_last_run_timestamp_seconds When the check last ran.\n";
    out += "# TYPE slurm_jail_gpu_check_last_run_timestamp_seconds gauge\n";
    out += fmt::format("slurm_jail_gpu_check_last_run_timestamp_seconds{{node=\"{}\"}} {:.3f}\n",
                       prometheus_label(info.node), info.timestamp_s);
    return out;
}

std::string render_ib_port_metrics(const std::vector<IbPortReading> &ports, const RunInfo &info) {
    if (ports.empty()) {
        return {};
    }
    std::string out = ib_port_gauge(
        ports, info, "ib_port_up", "1 if the port is ACTIVE and LinkUp, 0 otherwise.",
        [](const IbPortReading &p) { return std::optional<int>(port_is_up(p) ? 1 : 0); });
    out += ib_port_gauge(ports, info, "ib_port_rate_gbps", "The port's rate in Gb/s.",
                         [](const IbPortReading &p) { return parse_ib_rate(p.rate); });
    out += ib_port_gauge(ports, info, "ib_port_link_downed",
                         "The port's link_downed counter (times the link went down).",
                         [](const IbPortReading &p) { return p.link_downed; });
    out += ib_port_gauge(ports, info, "ib_port_symbol_error",
                         "The port's symbol_error counter (bit errors on the wire).",
                         [](const IbPortReading &p) { return p.symbol_error; });
    return out;
}

nlohmann::json render_ib_ports_json(const std::vector<IbPortReading> &ports) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto &p : ports) {
        out.push_back({{"port", p.name},
                       {"link_layer", p.link_layer},
                       {"state", p.state},
                       {"phys_state", p.phys_state},
                       {"up", port_is_up(p)},
                       {"rate", p.rate},
                       {"rate_gbps", json_or_null(parse_ib_rate(p.rate))},
                       {"link_downed", json_or_null(p.link_downed)},
                       {"symbol_error", json_or_null(p.symbol_error)}});
    }
    return out;
}

} // namespace sjh
