// SPDX-License-Identifier: Apache-2.0
#include "node_check.hpp"

#include "gate_reservation.hpp"
#include "node_action.hpp"
#include "slurm_client.hpp"
#include "trusted_files.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace sjh {

void add_node_action_options(CLI::App &app, NodeActionOptions &o) {
    app.add_option("--node", o.node, "Slurm node name (default: $SLURMD_NODENAME)");
    app.add_option("--drain-after", o.drain_after, "Drain after this many failures in a row")
        ->capture_default_str()
        ->check(CLI::Range(1U, 1000U));
    app.add_option("--state-dir", o.state_dir, "Where the failure counter is kept")
        ->capture_default_str();
    app.add_option("--scontrol", o.scontrol, "scontrol to use")->capture_default_str();
    app.add_flag("--json", o.json, "Print the result as JSON");
    app.add_flag("--no-drain", o.no_drain, "Only report; never talk to Slurm");
    app.add_flag("--dry-run", o.dry_run, "Print the drain/resume it would do, change nothing");
}

void resolve_node_name(NodeActionOptions &o, std::string_view usual_source) {
    if (o.node.empty()) {
        if (const char *env = std::getenv("SLURMD_NODENAME")) {
            o.node = env;
        }
    }
    if (o.node.empty() && !o.no_drain) {
        throw std::runtime_error(fmt::format("no node name: {}; otherwise pass --node NAME, or "
                                             "--no-drain to only report",
                                             usual_source));
    }
    // It names the node's failure counter file, so it must be one file name.
    if (o.node.find('/') != std::string::npos || o.node == "." || o.node == "..") {
        throw std::runtime_error(fmt::format("'{}' is not a Slurm node name", o.node));
    }
}

void check_node_action_paths(const NodeActionOptions &o) {
    if (o.no_drain) {
        return;
    }
    (void)check_state_dir(o.state_dir);
    (void)find_slurm_tool(o.scontrol);
}

void act_on_node(const NodeActionOptions &o, const CheckResult &result, int scontrol_timeout_s,
                 const std::optional<GateSettings> &gate) {
    if (o.no_drain) {
        return;
    }
    SlurmTools tools;
    tools.scontrol = o.scontrol;
    tools.timeout_s = scontrol_timeout_s;
    ActionSettings s;
    s.node = o.node;
    s.state_file = o.state_dir + "/" + result.state_file;
    s.drain_after = o.drain_after;
    s.dry_run = o.dry_run;
    act_on_outcome(SlurmClient(tools), s, result.check, result.passed, result.cause,
                   o.json ? stderr : stdout, gate);
}

void add_gate_options(CLI::App &app, GateOptions &g) {
    app.add_flag("--gate", g.gate,
                 "New-node gate: hold a new, rebooted or re-GPUed node out of scheduling until "
                 "the quick check and the NCCL check have both passed on it since (default off)");
    app.add_option("--gate-dir", g.gate_dir,
                   "Where the gate records each check's pass (default: --state-dir; both checks "
                   "must use the same directory)");
    app.add_option("--boot-id-file", g.boot_id_file,
                   "The node's boot id, for the gate (tests and containers whose /proc is not "
                   "the host's)")
        ->capture_default_str();
}

std::string gate_dir(const NodeActionOptions &o, const GateOptions &g) {
    return g.gate_dir.empty() ? o.state_dir : g.gate_dir;
}

std::vector<std::string> gpu_serials(const NodeSnapshot &snapshot) {
    std::vector<std::string> serials;
    serials.reserve(snapshot.gpus.size());
    for (const auto &gpu : snapshot.gpus) {
        serials.push_back(gpu.serial);
    }
    return serials;
}

std::optional<GateSettings> gate_settings(const NodeActionOptions &o, const GateOptions &g,
                                          const std::vector<std::string> &serials) {
    if (!g.gate || o.no_drain) {
        return std::nullopt;
    }
    const auto dir = gate_dir(o, g);
    (void)check_state_dir(dir);
    return GateSettings{dir, make_identity(read_boot_id(g.boot_id_file), serials)};
}

namespace {

// How Slurm holds the node, for --gate-status: one line, also when slurmctld
// cannot be asked (the records are still worth showing then).
std::pair<std::optional<Reservation>, std::string> hold_in_slurm(const NodeActionOptions &o) {
    try {
        SlurmTools tools;
        tools.scontrol = o.scontrol;
        const auto named = find_named(SlurmClient(tools).reservations(), o.node);
        return {named, describe_hold(o.node, named)};
    } catch (const SlurmError &e) {
        return {std::nullopt, fmt::format("unknown: {}", e.what())};
    }
}

} // namespace

void print_gate_status(const NodeActionOptions &o, const GateOptions &g,
                       const std::vector<std::string> &serials) {
    if (o.node.empty()) {
        throw std::runtime_error("--gate-status needs the node's name: pass --node NAME");
    }
    const auto now = make_identity(read_boot_id(g.boot_id_file), serials);
    // Read only through a directory nobody but root can change, as the checks do.
    const auto dir = gate_dir(o, g);
    (void)check_state_dir(dir);
    const auto records = read_gate_records(dir, o.node);
    const auto view = view_gate(now, records);
    const auto [named, hold] = hold_in_slurm(o);
    if (!o.json) {
        fmt::print("{}  in Slurm: {}\n", render_gate_status(o.node, now, records, view), hold);
        return;
    }
    const auto pass_json = [&](const std::optional<GatePass> &p) {
        if (!p) {
            return nlohmann::json(nullptr);
        }
        return nlohmann::json{{"boot_id", p->identity.boot_id},
                              {"gpu_serials", p->identity.gpu_serials},
                              {"time", p->time_s},
                              {"counts_now", p->identity == now}};
    };
    const nlohmann::json j{
        {"node", o.node},
        {"enabled", g.gate},
        {"held", view.held},
        {"cause", view.cause},
        {"missing", view.missing},
        {"reason", view.reason},
        {"boot_id", now.boot_id},
        {"gpu_serials", now.gpu_serials},
        {"gpu", pass_json(records.gpu)},
        {"nccl", pass_json(records.nccl)},
        {"reservation", named ? nlohmann::json(named->name) : nullptr},
        {"reservation_is_gates", named.has_value() && is_gate_reservation(*named, o.node)},
        {"in_slurm", hold}};
    fmt::print("{}\n", j.dump(2));
}

} // namespace sjh
