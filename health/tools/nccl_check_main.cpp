// SPDX-License-Identifier: Apache-2.0
// slurm-jail-nccl-check: runs all_reduce_perf on this node, judges the result
// and drains/resumes the node. See man/slurm-jail-nccl-check.8.
#include "child_env.hpp"
#include "nccl_metrics.hpp"
#include "nccl_output.hpp"
#include "nccl_thresholds.hpp"
#include "nccl_verdict.hpp"
#include "nvml_probe.hpp"
#include "slurm_client.hpp"
#include "subprocess.hpp"
#include "trusted_files.hpp"

#include "nccl_run.hpp"
#include "node_check.hpp"
#include "program_main.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace {

using namespace sjh;

// What all_reduce_perf keeps of the check's environment besides the fixed
// PATH: the GPUs Slurm gave the job.
const std::vector<std::string> kKeptEnvironment = {"CUDA_VISIBLE_DEVICES"};

struct Options : NodeActionOptions, GateOptions {
    std::string config = kDefaultConfig;
    std::string binary = kDefaultAllReducePerf;
    std::string args = "-b 8G -e 8G -f 2 -g {gpus}";
    std::vector<std::string> env;
    int timeout_s = 900;
    std::vector<std::string> thresholds;
    std::string gpu_model;
    unsigned gpus = 0;
    unsigned nodes = 1;
    std::string nvml_library = kDefaultNvmlLibrary;
    std::string metrics_file;
};

void add_options(CLI::App &app, Options &o) {
    add_config_option(app, o.config, "nccl-check");
    app.add_option("--binary", o.binary,
                   "all_reduce_perf to run (it and every directory above it root-owned, not "
                   "writable by group or others)")
        ->capture_default_str();
    app.add_option("--args", o.args, "Its arguments, split on spaces; {gpus} becomes the GPU count")
        ->capture_default_str();
    repeatable(app.add_option("--env", o.env,
                              "Environment KEY=VALUE for all_reduce_perf (repeatable); it gets "
                              "only these, PATH and CUDA_VISIBLE_DEVICES"));
    app.add_option("--timeout", o.timeout_s, "Kill it after this many seconds")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    repeatable(app.add_option("--threshold", o.thresholds,
                              "Minimum busbw, MODELxGPUS=GBPS or MODELxGPUSxNODES=GBPS "
                              "(repeatable; adds to/overrides the built-in table)"));
    app.add_option("--gpu-model", o.gpu_model, "GPU name to match thresholds (default: NVML)");
    app.add_option("--gpus", o.gpus, "GPU count per node (default: NVML)");
    app.add_option("--nodes", o.nodes,
                   "Nodes the all_reduce_perf run spans (--args/--binary must launch it so); "
                   "picks the MODELxGPUSxNODES threshold")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--nvml-library", o.nvml_library, "NVML library to dlopen")
        ->capture_default_str();
    app.add_option("--metrics-file", o.metrics_file,
                   "Write Prometheus metrics here (node_exporter textfile collector)");
    add_node_action_options(app, o);
    add_gate_options(app, o);
}

// With --gate: the node's identity (boot id and the GPUs' serials from NVML),
// before the long run, so that a configuration error comes first.
std::optional<GateSettings> nccl_gate(const Options &o) {
    if (!o.gate || o.no_drain) {
        return std::nullopt;
    }
    const auto probe = probe_gpus(trusted_library(o.nvml_library), std::chrono::seconds(30));
    if (!probe.snapshot) {
        throw std::runtime_error(fmt::format(
            "--gate needs the GPUs' serial numbers, and NVML failed ({}); fix NVML or run "
            "without --gate",
            probe.failure));
    }
    return gate_settings(o, o, gpu_serials(*probe.snapshot));
}

nlohmann::json to_json(const NcclOutput &out, const NcclVerdict &v, const NcclRun &run,
                       const Options &o, const std::optional<Threshold> &t) {
    return {{"node", o.node},
            {"verdict", v.pass ? "pass" : "fail"},
            {"cause", v.cause},
            {"gpu_model", o.gpu_model},
            {"gpus", o.gpus},
            {"nodes", o.nodes},
            {"threshold_gbps", t ? nlohmann::json(t->min_busbw) : nlohmann::json(nullptr)},
            {"busbw_gbps",
             v.measured_busbw ? nlohmann::json(*v.measured_busbw) : nlohmann::json(nullptr)},
            {"size_bytes",
             v.measured_size ? nlohmann::json(*v.measured_size) : nlohmann::json(nullptr)},
            {"avg_busbw_gbps",
             out.avg_busbw ? nlohmann::json(*out.avg_busbw) : nlohmann::json(nullptr)},
            {"rows", out.rows.size()},
            {"exit_code", run.exit_code},
            {"timed_out", run.timed_out},
            {"notes", v.notes}};
}

// --metrics-file: the verdict and figures of this run, replaced atomically.
void write_nccl_metrics(const Options &o, const NcclVerdict &v, const std::optional<Threshold> &t,
                        std::chrono::steady_clock::time_point start) {
    if (o.metrics_file.empty()) {
        return;
    }
    NcclMetrics m;
    m.node = o.node;
    m.model = o.gpu_model;
    m.gpus = o.gpus;
    m.nodes = o.nodes;
    m.pass = v.pass;
    m.busbw_gbps = v.measured_busbw;
    if (t) {
        m.threshold_gbps = t->min_busbw;
    }
    m.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.timestamp_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    write_file_atomically(o.metrics_file, render_nccl_metrics(m));
}

int run(Options &o) {
    const auto start = std::chrono::steady_clock::now();
    resolve_node_name(o, "inside a Slurm job SLURMD_NODENAME is set");
    check_node_action_paths(o);
    const auto gate = nccl_gate(o);
    const auto binary = find_all_reduce_perf(o.binary);
    const auto environment = child_environment(current_environment(), kKeptEnvironment, o.env);
    const auto table = threshold_table(o.thresholds);
    resolve_gpus(o.gpu_model, o.gpus, o.nvml_library);
    const unsigned ranks = o.gpus * o.nodes;
    std::optional<Threshold> threshold = find_threshold(table, o.gpu_model, o.gpus, o.nodes);
    if (!threshold && ranks > 1) {
        threshold = required_threshold(table, o.gpu_model, o.gpus, o.nodes, "nccl-check");
    }
    CommandOptions copts;
    copts.timeout = std::chrono::seconds(o.timeout_s);
    copts.merge_stderr = true;
    copts.environment = environment;
    const auto r = run_command(build_argv(binary, o.args, o.gpus), copts);
    if (!r.started) {
        throw std::runtime_error(fmt::format("cannot run '{}': {}; install nccl-tests or pass "
                                             "--binary PATH",
                                             o.binary, r.exec_error));
    }
    const auto run = nccl_run_of(r, o.timeout_s);
    const auto out = parse_nccl_output(r.out);
    const auto v = judge_nccl(out, run, threshold, ranks);
    write_nccl_metrics(o, v, threshold, start);
    if (o.json) {
        fmt::print("{}\n", to_json(out, v, run, o, threshold).dump(2));
    } else {
        fmt::print("{} {}: {}\n", v.pass ? "PASS" : "FAIL", o.node.empty() ? "node" : o.node,
                   v.pass ? "NCCL all_reduce check passed" : v.cause);
        for (const auto &n : v.notes) {
            fmt::print("  {}\n", n);
        }
    }
    (void)std::fflush(stdout);
    // One counter file per node: inside the jail the state directory is shared.
    act_on_node(o, {"nccl", "nccl-check." + o.node + ".failures", v.pass, v.cause},
                SlurmTools{}.timeout_s, gate);
    return v.pass ? 0 : 1;
}

int run_main(int argc, char **argv) {
    CLI::App app{"NCCL bandwidth check: runs all_reduce_perf on this node, judges the bus "
                 "bandwidth at the largest message size against a per-model threshold, drains "
                 "the node on failure and resumes it when a later run passes.",
                 "slurm-jail-nccl-check"};
    Options o;
    add_options(app, o);
    return parse_and_run(app, argc, argv, "nccl-check", [&] { return run(o); });
}

} // namespace

int main(int argc, char **argv) {
    return sjh::guarded_main([&] { return run_main(argc, argv); });
}
