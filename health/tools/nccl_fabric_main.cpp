// SPDX-License-Identifier: Apache-2.0
// slurm-jail-nccl-fabric: runs all_reduce_perf across the nodes of its Slurm
// job (one rank per GPU, srun --mpi=pmix), and when that fails or is slow,
// runs pairs of nodes to find the one to blame and drains it alone. See
// man/slurm-jail-nccl-fabric.8.
#include "child_env.hpp"
#include "fabric_blame.hpp"
#include "fabric_metrics.hpp"
#include "nccl_output.hpp"
#include "nccl_verdict.hpp"
#include "node_action.hpp"
#include "nvml_probe.hpp"
#include "slurm_client.hpp"
#include "subprocess.hpp"
#include "trusted_files.hpp"

#include "nccl_run.hpp"
#include "program_main.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <future>

namespace {

using namespace sjh;

constexpr const char *kCheck = "nccl-fabric";

struct Options {
    std::string config = kDefaultConfig;
    std::string binary = kDefaultAllReducePerf;
    std::string args = "-b 8G -e 8G -f 2 -g 1";
    std::vector<std::string> env;
    std::vector<std::string> srun_args;
    int timeout_s = 900;
    std::vector<std::string> thresholds;
    std::string gpu_model;
    unsigned gpus = 0;
    std::string nvml_library = kDefaultNvmlLibrary;
    std::string nodelist;
    std::string jobid;
    double max_drain_fraction = 0.25;
    unsigned drain_after = 1;
    std::string state_dir = "/var/lib/slurm-jail/health";
    std::string scontrol = "scontrol";
    std::string srun = "srun";
    std::string metrics_file;
    bool no_drain = false;
    bool dry_run = false;
};

void add_options(CLI::App &app, Options &o) {
    add_config_option(app, o.config, kCheck);
    app.add_option("--binary", o.binary,
                   "all_reduce_perf built with MPI, run by every rank (root-owned, not writable "
                   "by group or others)")
        ->capture_default_str();
    app.add_option("--args", o.args, "Its arguments, split on spaces (one GPU per rank: -g 1)")
        ->capture_default_str();
    repeatable(app.add_option("--env", o.env,
                              "Environment KEY=VALUE for the ranks, e.g. NCCL_IB_HCA=mlx5 "
                              "(repeatable); srun gets only these, PATH and SLURM_CONF"));
    repeatable(app.add_option("--srun-arg", o.srun_args,
                              "Extra srun argument for every run, e.g. --gpus-per-node=8 "
                              "(repeatable)"));
    app.add_option("--timeout", o.timeout_s,
                   "Each run's time limit in seconds (srun --time, in whole minutes)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    repeatable(app.add_option("--threshold", o.thresholds,
                              "Minimum busbw, MODELxGPUSxNODES=GBPS (repeatable; adds to/overrides "
                              "the built-in table)"));
    app.add_option("--gpu-model", o.gpu_model, "GPU name to match thresholds (default: NVML)");
    app.add_option("--gpus", o.gpus, "GPUs per node, one rank each (default: NVML)");
    app.add_option("--nvml-library", o.nvml_library, "NVML library to dlopen")
        ->capture_default_str();
    app.add_option("--nodelist", o.nodelist, "Nodes to test (default: $SLURM_JOB_NODELIST)");
    app.add_option("--jobid", o.jobid, "Job whose nodes run the steps (default: $SLURM_JOB_ID)");
    app.add_option("--max-drain-fraction", o.max_drain_fraction,
                   "Never drain more than this fraction of the tested nodes (rounded down)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--drain-after", o.drain_after, "Drain after this many failures in a row")
        ->capture_default_str()
        ->check(CLI::Range(1U, 1000U));
    app.add_option("--state-dir", o.state_dir, "Where the failure counters are kept")
        ->capture_default_str();
    app.add_option("--scontrol", o.scontrol, "scontrol to use")->capture_default_str();
    app.add_option("--srun", o.srun, "srun to use")->capture_default_str();
    app.add_option("--metrics-file", o.metrics_file,
                   "Write Prometheus metrics here (node_exporter textfile collector)");
    app.add_flag("--no-drain", o.no_drain, "Only report; never drain or resume");
    app.add_flag("--dry-run", o.dry_run, "Print the drain/resume it would do, change nothing");
}

std::string from_env(const std::string &value, const char *name, const char *option) {
    if (!value.empty()) {
        return value;
    }
    if (const char *env = std::getenv(name)) {
        return env;
    }
    throw std::runtime_error(fmt::format(
        "no {}: run inside a Slurm job across the nodes to test (sbatch --exclusive -N N, or "
        "slurm-jail-nccl-submit --fabric), or pass {}",
        name, option));
}

// What a run needs that stays the same from group to group.
struct Runner {
    std::vector<std::string> srun_head; // srun and the job's fixed options
    std::vector<std::string> command;   // all_reduce_perf and its arguments
    CommandOptions copts;
    const std::vector<Threshold> *table = nullptr;
    std::string gpu_model;
    unsigned gpus = 0;
    int timeout_s = 0;
};

// show_output: print all_reduce_perf's report before the verdict (the run
// across all nodes, the measurement an admin reads in the job's log).
GroupResult run_group(const Runner &r, const NodeGroup &group, bool show_output = false) {
    auto argv = r.srun_head;
    argv.push_back(fmt::format("--nodes={}", group.size()));
    argv.push_back(fmt::format("--nodelist={}", fmt::join(group, ",")));
    argv.insert(argv.end(), r.command.begin(), r.command.end());
    const auto c = run_command(argv, r.copts);
    if (show_output) {
        fmt::print("{}", c.out);
    }
    const auto run = nccl_run_of(c, r.timeout_s);
    const auto nodes = static_cast<unsigned>(group.size());
    const auto threshold = required_threshold(*r.table, r.gpu_model, r.gpus, nodes, kCheck);
    const auto v = judge_nccl(parse_nccl_output(c.out), run, threshold, r.gpus * nodes);
    GroupResult g{group, v.pass, v.measured_busbw, v.cause};
    if (!c.started) {
        g.cause = fmt::format("cannot run srun: {}", c.exec_error);
    }
    fmt::print("{} {}: {}\n", g.pass ? "PASS" : "FAIL", group_name(group),
               g.pass ? (v.notes.empty() ? "passed" : v.notes.back()) : g.cause);
    (void)std::fflush(stdout);
    return g;
}

void act(const Options &o, const std::string &node, bool passed, const std::string &cause) {
    if (o.no_drain) {
        return;
    }
    SlurmTools tools;
    tools.scontrol = o.scontrol;
    ActionSettings s;
    s.node = node;
    s.state_file = fmt::format("{}/nccl-fabric.{}.failures", o.state_dir, node);
    s.drain_after = o.drain_after;
    s.dry_run = o.dry_run;
    (void)act_on_outcome(SlurmClient(tools), s, kCheck, passed, cause, stdout);
}

// The pairs of a round share no node, so they run at the same time, each as
// its own step of the job; the rounds run one after another.
std::vector<GroupResult> run_rounds(const Runner &r, const std::vector<std::string> &nodes) {
    std::vector<GroupResult> results;
    for (const auto &round : plan_pair_rounds(nodes)) {
        std::vector<std::future<GroupResult>> running;
        running.reserve(round.size());
        for (const auto &group : round) {
            running.push_back(
                std::async(std::launch::async, [&r, &group] { return run_group(r, group); }));
        }
        for (auto &f : running) {
            results.push_back(f.get());
        }
    }
    return results;
}

// The pairs after a failed run across all nodes; their results and the node
// they blame go into `metrics`.
void after_failure(const Options &o, const Runner &r, const std::vector<std::string> &nodes,
                   FabricMetrics &metrics) {
    const auto results = run_rounds(r, nodes);
    metrics.groups.insert(metrics.groups.end(), results.begin(), results.end());
    const auto blame = blame_groups(nodes, results);
    metrics.blamed = blame.culprit;
    fmt::print("{}\n", blame.summary);
    const auto pair = required_threshold(*r.table, r.gpu_model, r.gpus, 2, kCheck);
    metrics.threshold_gbps[2] = pair.min_busbw;
    if (blame.culprit) {
        const auto limit = drain_limit(static_cast<unsigned>(nodes.size()), o.max_drain_fraction);
        const auto cause =
            fmt::format("{}; pairs need {:g} ({})", blame.evidence, pair.min_busbw, pair.key());
        if (limit >= 1) {
            act(o, *blame.culprit, false, cause);
        } else {
            fmt::print("not draining {}: a run of {} nodes may drain at most {} "
                       "(--max-drain-fraction {:g}); evidence: {}\n",
                       *blame.culprit, nodes.size(), limit, o.max_drain_fraction, cause);
        }
    }
    for (const auto &node : blame.cleared) {
        act(o, node, true, "");
    }
}

// --metrics-file: this run's figures, replaced atomically.
void write_fabric_metrics(const Options &o, FabricMetrics &m,
                          std::chrono::steady_clock::time_point start) {
    if (o.metrics_file.empty()) {
        return;
    }
    m.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.timestamp_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    write_file_atomically(o.metrics_file, render_fabric_metrics(m));
}

Runner make_runner(const Options &o, const std::string &jobid,
                   const std::vector<Threshold> &table) {
    Runner r;
    r.table = &table;
    r.gpu_model = o.gpu_model;
    r.gpus = o.gpus;
    r.timeout_s = o.timeout_s;
    // Slurm ends a step at its time limit (whole minutes); killing srun alone
    // would leave the ranks running and hold the nodes from the next group.
    const int minutes = (o.timeout_s + 59) / 60;
    r.srun_head = {find_slurm_tool(o.srun),
                   "--jobid=" + jobid,
                   fmt::format("--ntasks-per-node={}", o.gpus),
                   "--mpi=pmix",
                   "--kill-on-bad-exit=1",
                   fmt::format("--time={}", minutes)};
    r.srun_head.insert(r.srun_head.end(), o.srun_args.begin(), o.srun_args.end());
    r.command = build_argv(find_all_reduce_perf(o.binary), o.args, 1);
    // srun itself is killed only if the step outlives its limit by a minute.
    r.copts.timeout = std::chrono::seconds(minutes * 60 + 60);
    r.copts.merge_stderr = true;
    r.copts.environment = child_environment(current_environment(), {"SLURM_CONF"}, o.env);
    return r;
}

int run(Options &o) {
    const auto start = std::chrono::steady_clock::now();
    SlurmTools tools;
    tools.scontrol = o.scontrol;
    const auto nodelist = from_env(o.nodelist, "SLURM_JOB_NODELIST", "--nodelist NODES");
    const auto jobid = from_env(o.jobid, "SLURM_JOB_ID", "--jobid ID");
    const auto nodes = SlurmClient(tools).hostnames(nodelist);
    if (nodes.size() < 2) {
        throw std::runtime_error(fmt::format(
            "'{}' is {} node(s): the fabric check needs 2 or more (3 or more to single out a "
            "node); submit it with -N 3 or more",
            nodelist, nodes.size()));
    }
    if (!o.no_drain) {
        (void)check_state_dir(o.state_dir);
    }
    (void)drain_limit(static_cast<unsigned>(nodes.size()), o.max_drain_fraction);
    const auto table = threshold_table(o.thresholds);
    resolve_gpus(o.gpu_model, o.gpus, o.nvml_library);
    // Both thresholds before the first run, so a long run does not end in a
    // configuration error.
    (void)required_threshold(table, o.gpu_model, o.gpus, 2, kCheck);
    const auto all =
        required_threshold(table, o.gpu_model, o.gpus, static_cast<unsigned>(nodes.size()), kCheck);
    const auto r = make_runner(o, jobid, table);
    fmt::print("testing {} nodes ({}), {} x {} GPUs, one rank each\n", nodes.size(),
               fmt::join(nodes, ","), o.gpu_model, o.gpus);
    FabricMetrics metrics{o.gpu_model, o.gpus, nodes, {}, {}, {}, 0, 0};
    metrics.threshold_gbps[static_cast<unsigned>(nodes.size())] = all.min_busbw;
    metrics.groups.push_back(run_group(r, nodes, true));
    if (!metrics.groups.front().pass) {
        after_failure(o, r, nodes, metrics);
    } else {
        for (const auto &node : nodes) {
            act(o, node, true, "");
        }
    }
    write_fabric_metrics(o, metrics, start);
    return metrics.groups.front().pass ? 0 : 1;
}

int run_main(int argc, char **argv) {
    CLI::App app{"Multi-node NCCL check: inside a Slurm job across several nodes, runs "
                 "all_reduce_perf over all of them (one rank per GPU, srun --mpi=pmix) and judges "
                 "the bus bandwidth at the largest message size. When that fails, runs pairs of "
                 "nodes and drains only a node that fails in every pair it is in while every pair "
                 "without it passes; resumes nodes it drained once they pass.",
                 "slurm-jail-nccl-fabric"};
    Options o;
    add_options(app, o);
    return parse_and_run(app, argc, argv, kCheck, [&] { return run(o); });
}

} // namespace

int main(int argc, char **argv) {
    return sjh::guarded_main([&] { return run_main(argc, argv); });
}
