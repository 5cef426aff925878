// SPDX-License-Identifier: Apache-2.0
// slurm-jail-gpu-check: the quick GPU health check, run by slurmd as its
// HealthCheckProgram. See man/slurm-jail-gpu-check.8.
#include "dcgm_run.hpp"
#include "gpu_checks.hpp"
#include "ib_checks.hpp"
#include "ib_state_file.hpp"
#include "ib_sysfs.hpp"
#include "kernel_log.hpp"
#include "nvml_probe.hpp"
#include "report.hpp"
#include "slurm_client.hpp"
#include "trusted_files.hpp"

#include "node_check.hpp"
#include "program_main.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <fmt/format.h>
#include <optional>

namespace {

using namespace sjh;
using Clock = std::chrono::steady_clock;

struct Options : NodeActionOptions, GateOptions {
    bool gate_status = false;
    std::string config = kDefaultConfig;
    unsigned expected_gpus = 0;
    std::string nvml_library = kDefaultNvmlLibrary;
    double budget_s = 30;
    std::string kernel_log = kDefaultKernelLog;
    double xid_window_s = 3600;
    std::string fatal_xids;
    unsigned temp_warn_c = 85;
    std::string metrics_file;
    std::string sysfs_root = kDefaultSysfsRoot;
    std::string ib_ports;
    std::string ib_min_rate;
    std::uint64_t ib_symbol_error_drain = 0;
    std::string dcgm_level = "off";
    bool dcgm_required = false;
    std::string dcgmi = "dcgmi";
};

void add_options(CLI::App &app, Options &o) {
    add_config_option(app, o.config, "gpu-check");
    app.add_option("--expected-gpus", o.expected_gpus,
                   "GPUs the node must have (default: from the node's Gres in Slurm)");
    app.add_option("--nvml-library", o.nvml_library, "NVML library to dlopen")
        ->capture_default_str();
    app.add_option("--budget", o.budget_s, "Hard time budget for the whole run, seconds")
        ->capture_default_str()
        ->check(CLI::Range(0.5, 3600.0));
    app.add_option("--kernel-log", o.kernel_log, "Kernel log to scan for Xids")
        ->capture_default_str();
    app.add_option("--xid-window", o.xid_window_s, "Xids younger than this many seconds count")
        ->capture_default_str();
    app.add_option("--fatal-xids", o.fatal_xids,
                   "Comma-separated Xids that drain (default: the list in the man page)");
    app.add_option("--temp-warn", o.temp_warn_c, "Warn at or above this GPU temperature, C")
        ->capture_default_str();
    app.add_option("--metrics-file", o.metrics_file,
                   "Write Prometheus metrics here (node_exporter textfile collector)");
    app.add_option("--sysfs-root", o.sysfs_root, "Where sysfs is mounted (InfiniBand ports)")
        ->capture_default_str();
    app.add_option("--ib-ports", o.ib_ports,
                   "Comma-separated HCA/PORT that must be up, e.g. mlx5_0/1,mlx5_1/1 (default: "
                   "the ports up at the last passing run)");
    app.add_option("--ib-min-rate", o.ib_min_rate,
                   "Gb/s every expected port must reach, e.g. 400 (default: each port's rate at "
                   "the last passing run)");
    app.add_option("--ib-symbol-error-drain", o.ib_symbol_error_drain,
                   "Drain when a port's symbol_error grows by more than this between runs (0: "
                   "only report)")
        ->capture_default_str();
    app.add_option("--dcgm-level", o.dcgm_level,
                   "Also run `dcgmi diag -r LEVEL` (1 takes seconds to a minute, 2-4 minutes to "
                   "hours: raise --budget, not for HealthCheckProgram) under the deadline")
        ->capture_default_str()
        ->check(CLI::IsMember({"off", "1", "2", "3", "4"}));
    app.add_flag("--dcgm-required", o.dcgm_required,
                 "Drain when DCGM gives no verdict (dcgmi missing or killed, nv-hostengine "
                 "unreachable, output unreadable); default: warn");
    app.add_option("--dcgmi", o.dcgmi, "dcgmi to run (a bare name is looked up in the safe PATH)")
        ->capture_default_str();
    add_node_action_options(app, o);
    add_gate_options(app, o);
    app.add_flag("--gate-status", o.gate_status,
                 "Print the new-node gate's state for this node (which checks passed since "
                 "when, what is missing) and exit; runs no check and changes nothing");
}

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::chrono::milliseconds ms(double s) {
    return std::chrono::milliseconds(static_cast<long>(s * 1000.0));
}

unsigned resolve_expected(const Options &o, const SlurmClient &slurm) {
    if (o.expected_gpus > 0) {
        return o.expected_gpus;
    }
    if (o.node.empty()) {
        throw std::runtime_error("the expected GPU count is unknown: pass --expected-gpus (or "
                                 "expected-gpus in the [gpu-check] config section)");
    }
    const auto gres = slurm.node_gres(o.node);
    const auto n = gpu_count_from_gres(gres);
    if (!n || *n == 0) {
        throw std::runtime_error(fmt::format(
            "node {} has no gpu in its Gres ('{}'): set Gres=gpu:N for it in slurm.conf or pass "
            "--expected-gpus",
            o.node, gres));
    }
    return *n;
}

std::vector<XidEvent> scan_xids(const Options &o, Evaluation &problems_out) {
    try {
        const auto fatal =
            o.fatal_xids.empty() ? default_fatal_xids() : parse_xid_list(o.fatal_xids);
        const auto events = parse_xid_log(read_kernel_log(o.kernel_log));
        return recent_fatal_xids(events, fatal, kernel_clock_now_us(),
                                 static_cast<std::uint64_t>(o.xid_window_s * 1e6));
    } catch (const std::invalid_argument &) {
        throw;
    } catch (const std::exception &e) {
        problems_out.problems.push_back(
            {"xid", std::nullopt, Severity::warn, fmt::format("Xids not checked: {}", e.what())});
        return {};
    }
}

IbCheckConfig ib_check_config(const Options &o) {
    IbCheckConfig cfg;
    if (!o.ib_ports.empty()) {
        cfg.ports = parse_ib_port_list(o.ib_ports);
    }
    if (!o.ib_min_rate.empty()) {
        cfg.min_rate_gbps = parse_ib_min_rate(o.ib_min_rate);
    }
    cfg.symbol_error_drain = o.ib_symbol_error_drain;
    return cfg;
}

std::string ib_state_path(const Options &o) {
    return o.state_dir + "/" + kIbStateFile;
}

// What the last runs left in --state-dir; nothing with --no-drain, which
// leaves the state directory alone.
IbState previous_ib_state(const Options &o) {
    if (o.no_drain || !check_state_dir(o.state_dir)) {
        return {};
    }
    return read_ib_state(ib_state_path(o));
}

// nullopt, with a warning, when sysfs could not be read: the ports are then
// neither judged nor remembered.
std::optional<std::vector<IbPortReading>> scan_ib_ports(const Options &o,
                                                        Evaluation &problems_out) {
    try {
        return read_ib_ports(o.sysfs_root);
    } catch (const std::exception &e) {
        problems_out.problems.push_back({"ib_port", std::nullopt, Severity::warn,
                                         fmt::format("IB ports not checked: {}", e.what())});
        return std::nullopt;
    }
}

// After acting on the node (which made the state directory): the counters
// seen now, and the ports up now when the run passed. Not with --no-drain or
// --dry-run, and not on a node that has no port and never had one.
void remember_ib_ports(const Options &o, const std::vector<IbPortReading> &ports,
                       const IbState &previous, bool passed) {
    if (o.no_drain || o.dry_run || (ports.empty() && previous.empty())) {
        return;
    }
    write_ib_state(ib_state_path(o), next_ib_state(ports, previous, passed));
}

// The seconds dcgmi may take: what is left of the budget, less what the Slurm
// calls after it need.
double dcgm_timeout_s(const Options &o, Clock::time_point start) {
    const double reserve = std::max(2.0, o.budget_s * 0.1);
    return std::max(0.1, o.budget_s - seconds_since(start) - reserve);
}

// --gate-status: the gate as the records and the node are now.
int gate_status(const Options &o) {
    const auto probe = probe_gpus(trusted_library(o.nvml_library), ms(o.budget_s));
    if (!probe.snapshot) {
        throw std::runtime_error(fmt::format(
            "cannot read the GPUs' serial numbers through NVML ({}); the gate compares them",
            probe.failure));
    }
    print_gate_status(o, o, gpu_serials(*probe.snapshot));
    return 0;
}

int run(Options &o) {
    const auto start = Clock::now();
    resolve_node_name(o, "slurmd sets SLURMD_NODENAME");
    if (o.gate_status) {
        return gate_status(o);
    }
    check_node_action_paths(o);
    const auto nvml_library = trusted_library(o.nvml_library);
    if (!o.fatal_xids.empty()) {
        (void)parse_xid_list(o.fatal_xids); // bad input fails before any work
    }
    const auto ib_cfg = ib_check_config(o);
    const auto ib_previous = previous_ib_state(o);
    SlurmTools tools;
    tools.scontrol = o.scontrol;
    tools.timeout_s = std::max(1, static_cast<int>(o.budget_s / 4));
    const SlurmClient slurm(tools);
    GpuCheckConfig cfg;
    cfg.expected_gpus = resolve_expected(o, slurm);
    cfg.temp_warn_c = o.temp_warn_c;

    // NVML gets most of the budget; the rest is kept for Xids and Slurm.
    const double probe_budget = o.budget_s * 0.75 - seconds_since(start);
    const auto probe = probe_gpus(nvml_library, ms(std::max(0.1, probe_budget)));
    Evaluation extra;
    Evaluation ev;
    if (probe.snapshot) {
        const auto xids = scan_xids(o, extra);
        ev = evaluate(*probe.snapshot, xids, cfg);
    } else {
        ev = evaluate_probe_failure(probe.failure);
    }
    ev.problems.insert(ev.problems.end(), extra.problems.begin(), extra.problems.end());
    // DCGM only where NVML answered: a node whose NVML failed drains anyway.
    std::optional<DcgmOutcome> dcgm;
    DcgmPolicy dcgm_policy;
    if (o.dcgm_level != "off" && probe.snapshot) {
        dcgm_policy.level = static_cast<unsigned>(std::stoul(o.dcgm_level));
        dcgm_policy.required = o.dcgm_required;
        dcgm_policy.timeout_s = dcgm_timeout_s(o, start);
        dcgm = judge_dcgm(run_dcgmi(o.dcgmi, dcgm_policy.level, ms(dcgm_policy.timeout_s)),
                          dcgm_policy, ev);
    }
    const auto ib_ports = scan_ib_ports(o, ev);
    if (ib_ports) {
        evaluate_ib(*ib_ports, ib_cfg, ib_previous, ev);
    }
    const auto ports_seen = ib_ports.value_or(std::vector<IbPortReading>{});

    RunInfo info;
    info.node = o.node;
    info.duration_s = seconds_since(start);
    info.timestamp_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    if (!o.metrics_file.empty()) {
        write_file_atomically(o.metrics_file,
                              render_metrics(ev, info) + render_ib_port_metrics(ports_seen, info) +
                                  (dcgm ? render_dcgm_metrics(*dcgm, dcgm_policy, info) : ""));
    }
    if (o.json) {
        auto j = render_json(ev, probe.snapshot, info);
        j["ib_ports"] = render_ib_ports_json(ports_seen);
        j["dcgm"] = dcgm ? render_dcgm_json(*dcgm, dcgm_policy) : nlohmann::json(nullptr);
        fmt::print("{}\n", j.dump(2));
    } else {
        fmt::print("{}", render_human(ev, info));
    }
    (void)std::fflush(stdout);
    // The scontrol calls share what is left of the budget: show, then update;
    // with the gate also the reservations' list and the reservation's change.
    const auto gate = gate_settings(
        o, o, probe.snapshot ? gpu_serials(*probe.snapshot) : std::vector<std::string>{});
    const double calls = gate ? 4 : 2;
    act_on_node(o, {"gpu", "gpu-check.failures", !ev.must_drain(), ev.cause()},
                std::max(1, static_cast<int>((o.budget_s - seconds_since(start)) / calls)), gate);
    if (ib_ports) {
        remember_ib_ports(o, *ib_ports, ib_previous, !ev.must_drain());
    }
    return ev.must_drain() ? 1 : 0;
}

int run_main(int argc, char **argv) {
    CLI::App app{"Quick GPU health check for Slurm's HealthCheckProgram: reads every GPU "
                 "through NVML within a hard time budget, scans the kernel log for fatal Xids, "
                 "checks the InfiniBand/RoCE ports in sysfs, optionally runs DCGM's diagnostic, "
                 "drains the node on failure and "
                 "resumes it when a later run passes.",
                 "slurm-jail-gpu-check"};
    Options o;
    add_options(app, o);
    return parse_and_run(app, argc, argv, "gpu-check", [&] { return run(o); });
}

} // namespace

int main(int argc, char **argv) {
    return sjh::guarded_main([&] { return run_main(argc, argv); });
}
