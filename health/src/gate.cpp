// SPDX-License-Identifier: Apache-2.0
#include "gate.hpp"

#include <algorithm>
#include <array>
#include <ctime>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace sjh {
namespace {

struct Waited {
    const char *label; // for people
    const std::optional<GatePass> &pass;
};

bool passed_now(const std::optional<GatePass> &pass, const NodeIdentity &now) {
    return pass && pass->identity == now;
}

// Why a check's pass does not count: what changed since it.
std::string cause_of(const std::optional<GatePass> &pass, const NodeIdentity &now) {
    if (!pass) {
        return "new node";
    }
    if (pass->identity.boot_id != now.boot_id) {
        return "new boot";
    }
    return "GPUs changed";
}

std::string utc(double time_s) {
    const auto t = static_cast<std::time_t>(time_s);
    std::tm tm{};
    (void)gmtime_r(&t, &tm);
    std::array<char, 32> text{};
    (void)std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text.data();
}

std::string describe(const NodeIdentity &id) {
    return fmt::format("boot {}, GPUs [{}]", id.boot_id.empty() ? "?" : id.boot_id,
                       fmt::join(id.gpu_serials, " "));
}

} // namespace

NodeIdentity make_identity(std::string boot_id, std::vector<std::string> gpu_serials) {
    std::sort(gpu_serials.begin(), gpu_serials.end());
    return {std::move(boot_id), std::move(gpu_serials)};
}

std::string render_gate_pass(std::string_view check, const GatePass &pass) {
    return nlohmann::json{{"check", check},
                          {"boot_id", pass.identity.boot_id},
                          {"gpu_serials", pass.identity.gpu_serials},
                          {"time", pass.time_s}}
               .dump() +
           "\n";
}

GatePass parse_gate_pass(std::string_view text, std::string_view check) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    const auto bad = [&] {
        return std::runtime_error(fmt::format("expected {{\"check\": \"{}\", \"boot_id\": "
                                              "\"...\", \"gpu_serials\": [...], \"time\": T}}",
                                              check));
    };
    if (j.is_discarded() || !j.is_object() || j.value("check", "") != check ||
        !j.contains("boot_id") || !j["boot_id"].is_string() || !j.contains("gpu_serials") ||
        !j["gpu_serials"].is_array() || !j.contains("time") || !j["time"].is_number()) {
        throw bad();
    }
    std::vector<std::string> serials;
    for (const auto &s : j["gpu_serials"]) {
        if (!s.is_string()) {
            throw bad();
        }
        serials.push_back(s.get<std::string>());
    }
    return {make_identity(j["boot_id"].get<std::string>(), std::move(serials)),
            j["time"].get<double>()};
}

GateView view_gate(const NodeIdentity &now, const GateRecords &records) {
    GateView v;
    for (const Waited w :
         {Waited{"the quick check", records.gpu}, Waited{"the NCCL check", records.nccl}}) {
        if (passed_now(w.pass, now)) {
            continue;
        }
        if (v.missing.empty()) {
            v.cause = cause_of(w.pass, now);
        }
        v.missing.emplace_back(w.label);
    }
    v.held = !v.missing.empty();
    if (v.held) {
        v.reason = make_reason(
            kGateCheck, fmt::format("{}, waiting for {}", v.cause, fmt::join(v.missing, " and ")));
    }
    return v;
}

Action apply_gate(const NodeState &node, const Action &check_action, const GateView &gate) {
    if (check_action.kind == ActionKind::drain || !node.drained() ||
        !is_reason_of_check(node.reason, kGateCheck)) {
        return check_action;
    }
    Action a;
    a.kind = ActionKind::resume;
    a.why = gate.held ? fmt::format("{}: resuming the gate's drain ('{}'): its reservation holds "
                                    "the node instead",
                                    node.name, node.reason)
                      : fmt::format("{}: the quick check and the NCCL check passed since this "
                                    "boot; resuming (drained by the gate: '{}')",
                                    node.name, node.reason);
    return a;
}

std::string render_gate_status(std::string_view node, const NodeIdentity &now,
                               const GateRecords &records, const GateView &gate) {
    std::string out = fmt::format("{}: {}\n", node,
                                  gate.held ? fmt::format("held ({}): waiting for {}", gate.cause,
                                                          fmt::join(gate.missing, " and "))
                                            : std::string("open: both checks passed since this "
                                                          "boot with these GPUs"));
    out += fmt::format("  now: {}\n", describe(now));
    for (const Waited w :
         {Waited{"the quick check", records.gpu}, Waited{"the NCCL check", records.nccl}}) {
        if (!w.pass) {
            out += fmt::format("  {}: never passed here\n", w.label);
        } else {
            out += fmt::format("  {}: passed {} ({}){}\n", w.label, utc(w.pass->time_s),
                               describe(w.pass->identity),
                               passed_now(w.pass, now)
                                   ? ""
                                   : fmt::format(": {}, must pass again", cause_of(w.pass, now)));
        }
    }
    return out;
}

} // namespace sjh
