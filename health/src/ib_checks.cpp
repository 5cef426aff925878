// SPDX-License-Identifier: Apache-2.0
#include "ib_checks.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace sjh {
namespace {

// What a port check found, folded into one node-level status per check.
struct IbVerdicts {
    bool ports_up = true;
    bool rates_ok = true;
    bool links_stable = true;
    bool symbols_clean = true;
};

std::string port_label(const IbPortReading &p) {
    return fmt::format("{} port {}", p.link_layer == "Ethernet" ? "RoCE" : "IB", p.name);
}

const IbPortReading *find_port(const std::vector<IbPortReading> &ports, const std::string &name) {
    const auto it = std::find_if(ports.begin(), ports.end(),
                                 [&](const IbPortReading &p) { return p.name == name; });
    return it == ports.end() ? nullptr : &*it;
}

std::optional<double> expected_rate(const std::string &name, const IbCheckConfig &cfg,
                                    const IbState &previous) {
    if (cfg.min_rate_gbps) {
        return cfg.min_rate_gbps;
    }
    const auto it = previous.passed_rates.find(name);
    return it == previous.passed_rates.end() ? std::nullopt : std::optional<double>(it->second);
}

void check_rate(Evaluation &e, IbVerdicts &v, const IbPortReading &p, double expected) {
    const auto rate = parse_ib_rate(p.rate);
    if (!rate) {
        e.problems.push_back({"ib_rate", std::nullopt, Severity::warn,
                              fmt::format("{}: rate '{}' unreadable, not checked against {:g} Gb/s",
                                          port_label(p), p.rate, expected)});
    } else if (*rate < expected) {
        v.rates_ok = false;
        e.problems.push_back({"ib_rate", std::nullopt, Severity::drain,
                              fmt::format("{}: rate {}, below the expected {:g} Gb/s",
                                          port_label(p), p.rate, expected)});
    }
}

void check_counters(Evaluation &e, IbVerdicts &v, const IbPortReading &p, const IbCheckConfig &cfg,
                    const IbState &previous) {
    const auto before = previous.counters.find(p.name);
    if (before == previous.counters.end()) {
        return;
    }
    const auto downs = counter_growth(p.link_downed, before->second.link_downed);
    if (downs && *downs > 0) {
        v.links_stable = false;
        e.problems.push_back(
            {"ib_link_downed", std::nullopt, Severity::drain,
             fmt::format("{}: link went down {} time{} since the last run (link_downed {} -> {})",
                         port_label(p), *downs, *downs == 1 ? "" : "s", *before->second.link_downed,
                         *p.link_downed)});
    }
    const auto symbols = counter_growth(p.symbol_error, before->second.symbol_error);
    if (symbols && *symbols > 0) {
        v.symbols_clean = false;
        const bool drain = cfg.symbol_error_drain > 0 && *symbols > cfg.symbol_error_drain;
        e.problems.push_back(
            {"ib_symbol_error", std::nullopt, drain ? Severity::drain : Severity::warn,
             fmt::format("{}: {} new symbol errors since the last run (symbol_error {} -> {}){}",
                         port_label(p), *symbols, *before->second.symbol_error, *p.symbol_error,
                         drain ? fmt::format(", more than --ib-symbol-error-drain {}",
                                             cfg.symbol_error_drain)
                               : "")});
    }
}

void check_port(Evaluation &e, IbVerdicts &v, const std::string &name,
                const std::vector<IbPortReading> &ports, const IbCheckConfig &cfg,
                const IbState &previous) {
    const auto *p = find_port(ports, name);
    if (p == nullptr) {
        v.ports_up = false;
        e.problems.push_back(
            {"ib_port", std::nullopt, Severity::drain,
             fmt::format("IB port {}: missing (no such HCA or port in sysfs)", name)});
        return;
    }
    check_counters(e, v, *p, cfg, previous);
    if (!port_is_up(*p)) {
        v.ports_up = false;
        e.problems.push_back({"ib_port", std::nullopt, Severity::drain,
                              fmt::format("{}: state {}, physical state {} (expected ACTIVE, "
                                          "LinkUp)",
                                          port_label(*p), port_state_name(p->state),
                                          port_state_name(p->phys_state))});
        return;
    }
    if (const auto rate = expected_rate(name, cfg, previous)) {
        check_rate(e, v, *p, *rate);
    }
}

} // namespace

std::vector<std::string> expected_ib_ports(const std::vector<IbPortReading> &ports,
                                           const IbCheckConfig &cfg, const IbState &previous) {
    if (!cfg.ports.empty()) {
        return cfg.ports;
    }
    std::vector<std::string> expected;
    expected.reserve(previous.passed_rates.size());
    for (const auto &[name, rate] : previous.passed_rates) {
        expected.push_back(name);
    }
    if (expected.empty()) {
        for (const auto &p : ports) {
            if (port_is_up(p)) {
                expected.push_back(p.name);
            }
        }
    }
    return expected;
}

std::optional<std::uint64_t> counter_growth(std::optional<std::uint64_t> now,
                                            std::optional<std::uint64_t> before) {
    if (!now || !before) {
        return std::nullopt;
    }
    return *now > *before ? *now - *before : 0;
}

void evaluate_ib(const std::vector<IbPortReading> &ports, const IbCheckConfig &cfg,
                 const IbState &previous, Evaluation &e) {
    const auto expected = expected_ib_ports(ports, cfg, previous);
    if (ports.empty() && expected.empty()) {
        return;
    }
    IbVerdicts v;
    for (const auto &name : expected) {
        check_port(e, v, name, ports, cfg, previous);
    }
    e.statuses.push_back({"ib_port", std::nullopt, v.ports_up});
    e.statuses.push_back({"ib_rate", std::nullopt, v.rates_ok});
    e.statuses.push_back({"ib_link_downed", std::nullopt, v.links_stable});
    e.statuses.push_back({"ib_symbol_error", std::nullopt, v.symbols_clean});
}

} // namespace sjh
