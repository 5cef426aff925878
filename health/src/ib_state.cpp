// SPDX-License-Identifier: Apache-2.0
#include "ib_state.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace sjh {
namespace {

constexpr const char *kExpectedForm =
    R"(expected {"passed_rates": {"HCA/PORT": GBPS, ...}, "counters": {"HCA/PORT": )"
    R"({"link_downed": N, "symbol_error": N}, ...}})";

std::optional<std::uint64_t> counter_from(const nlohmann::json &j, const char *key) {
    if (!j.contains(key)) {
        return std::nullopt;
    }
    if (!j[key].is_number_unsigned()) {
        throw std::runtime_error(kExpectedForm);
    }
    return j[key].get<std::uint64_t>();
}

nlohmann::json counters_json(const IbCounters &c) {
    nlohmann::json j = nlohmann::json::object();
    if (c.link_downed) {
        j["link_downed"] = *c.link_downed;
    }
    if (c.symbol_error) {
        j["symbol_error"] = *c.symbol_error;
    }
    return j;
}

} // namespace

IbState next_ib_state(const std::vector<IbPortReading> &ports, const IbState &previous,
                      bool passed) {
    IbState next;
    next.passed_rates = passed ? std::map<std::string, double>{} : previous.passed_rates;
    for (const auto &p : ports) {
        if (p.link_downed || p.symbol_error) {
            next.counters[p.name] = {p.link_downed, p.symbol_error};
        }
        const auto rate = parse_ib_rate(p.rate);
        if (passed && port_is_up(p) && rate) {
            next.passed_rates[p.name] = *rate;
        }
    }
    return next;
}

IbState parse_ib_state(std::string_view text) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("passed_rates") ||
        !j["passed_rates"].is_object() || !j.contains("counters") || !j["counters"].is_object()) {
        throw std::runtime_error(kExpectedForm);
    }
    IbState s;
    for (const auto &[port, rate] : j["passed_rates"].items()) {
        if (!rate.is_number() || rate.get<double>() <= 0) {
            throw std::runtime_error(kExpectedForm);
        }
        s.passed_rates[port] = rate.get<double>();
    }
    for (const auto &[port, counters] : j["counters"].items()) {
        if (!counters.is_object()) {
            throw std::runtime_error(kExpectedForm);
        }
        s.counters[port] = {counter_from(counters, "link_downed"),
                            counter_from(counters, "symbol_error")};
    }
    return s;
}

std::string render_ib_state(const IbState &state) {
    nlohmann::json rates = nlohmann::json::object();
    for (const auto &[port, rate] : state.passed_rates) {
        rates[port] = rate;
    }
    nlohmann::json counters = nlohmann::json::object();
    for (const auto &[port, c] : state.counters) {
        counters[port] = counters_json(c);
    }
    return nlohmann::json{{"passed_rates", rates}, {"counters", counters}}.dump() + "\n";
}

} // namespace sjh
