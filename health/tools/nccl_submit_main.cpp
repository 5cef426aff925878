// SPDX-License-Identifier: Apache-2.0
// slurm-jail-nccl-submit: the CronJob-friendly driver. Submits one exclusive
// job per eligible node, each running slurm-jail-nccl-check on that node,
// inside the jail. See man/slurm-jail-nccl-submit.8.
#include "config_file.hpp"
#include "gate_reservation.hpp"
#include "slurm_client.hpp"
#include "slurm_text.hpp"

#include "program_main.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

namespace {

using namespace sjh;

// Where the checks are in the jail, where their jobs run (docs/contract.md).
constexpr const char *kDefaultCheckCommand = "/usr/sbin/slurm-jail-nccl-check";
constexpr const char *kDefaultFabricCommand = "/usr/sbin/slurm-jail-nccl-fabric";

struct Options {
    std::string config = kDefaultConfig;
    std::string partition;
    std::string check_command = kDefaultCheckCommand;
    bool fabric = false;
    std::string fabric_command = kDefaultFabricCommand;
    std::vector<std::string> sbatch_args;
    std::vector<std::string> check_args;
    std::string job_name; // default: the check's program name
    std::string sinfo = "sinfo";
    std::string scontrol = "scontrol";
    std::string sbatch = "sbatch";
    bool dry_run = false;
};

// `node` empty: the fabric check, which takes its nodes from its job.
std::string wrap_command(const Options &o, const std::string &node) {
    std::string cmd = "exec " + shell_quote(o.fabric ? o.fabric_command : o.check_command);
    if (!node.empty()) {
        cmd += " --node " + shell_quote(node);
    }
    for (const auto &a : o.check_args) {
        cmd += " " + shell_quote(a);
    }
    return cmd;
}

// The nodes the new-node gate holds, each with its reservation's name: only
// the gate's own, active reservations count.
std::map<std::string, std::string> held_nodes(const std::vector<NodeState> &nodes,
                                              const std::vector<Reservation> &reservations) {
    std::map<std::string, std::string> held;
    for (const auto &n : nodes) {
        const auto r = find_named(reservations, n.name);
        if (r && r->active() && is_gate_reservation(*r, n.name)) {
            held.emplace(n.name, r->name);
        }
    }
    return held;
}

void submit(const Options &o, const SlurmClient &slurm, const std::string &what,
            std::vector<std::string> args, const std::string &node) {
    if (!o.partition.empty()) {
        args.push_back("--partition=" + o.partition);
    }
    args.insert(args.end(), o.sbatch_args.begin(), o.sbatch_args.end());
    args.push_back("--wrap=" + wrap_command(o, node));
    if (o.dry_run) {
        fmt::print("dry-run: would submit for {}: {} {}\n", what, o.sbatch, fmt::join(args, " "));
        return;
    }
    auto out = slurm.submit(args);
    while (!out.empty() && out.back() == '\n') {
        out.pop_back();
    }
    fmt::print("{}: {}\n", what, out);
}

int run(Options &o) {
    const auto &command = o.fabric ? o.fabric_command : o.check_command;
    if (o.job_name.empty()) {
        o.job_name = o.fabric ? "slurm-jail-nccl-fabric" : "slurm-jail-nccl-check";
    }
    if (!command.starts_with('/')) {
        throw std::invalid_argument(fmt::format(
            "--{}-command '{}' is not an absolute path: the job runs it as root, so it must "
            "not be looked up in the job's PATH",
            o.fabric ? "fabric" : "check", command));
    }
    // The check runs inside the jail, which need not have this config file:
    // its section travels on the check's command line, before the arguments
    // given after --, which win.
    auto check_args = config_section_args(o.config, o.fabric ? "nccl-fabric" : "nccl-check", false);
    check_args.insert(check_args.end(), o.check_args.begin(), o.check_args.end());
    o.check_args = check_args;
    SlurmTools tools;
    tools.sinfo = o.sinfo;
    tools.sbatch = o.sbatch;
    tools.scontrol = o.scontrol;
    const SlurmClient slurm(tools);
    const auto nodes = slurm.list_nodes(o.partition);
    const auto held = held_nodes(nodes, slurm.reservations());
    std::vector<std::string> eligible;
    unsigned skipped = 0;
    for (const auto &n : nodes) {
        const bool is_held = held.contains(n.name);
        if (o.fabric && is_held) {
            fmt::print("skip {}: held by the new-node gate (reservation {})\n", n.name,
                       held.at(n.name));
            ++skipped;
            continue;
        }
        if (!eligible_for_nccl(n.state, is_held)) {
            fmt::print("skip {}: state {}\n", n.name, n.state);
            ++skipped;
            continue;
        }
        eligible.push_back(n.name);
    }
    unsigned submitted = 0;
    if (o.fabric) {
        if (eligible.size() < 2) {
            throw std::runtime_error(fmt::format(
                "{} node(s) can take a job now: the fabric check needs 2 or more (3 or more to "
                "single out a node)",
                eligible.size()));
        }
        submit(o, slurm, fmt::format("{} nodes", eligible.size()),
               {"--exclusive", fmt::format("--nodes={}", eligible.size()),
                fmt::format("--nodelist={}", fmt::join(eligible, ",")), "--job-name=" + o.job_name},
               "");
        submitted = 1;
    } else {
        for (const auto &node : eligible) {
            std::vector<std::string> args{"--exclusive", "--nodes=1", "--nodelist=" + node,
                                          "--job-name=" + o.job_name};
            if (const auto r = held.find(node); r != held.end()) {
                args.push_back("--reservation=" + r->second); // the gate lets the check in
            }
            submit(o, slurm, node, std::move(args), node);
            ++submitted;
        }
    }
    fmt::print("{} {} job(s), skipped {} node(s)\n", o.dry_run ? "would submit" : "submitted",
               submitted, skipped);
    return 0;
}

int run_main(int argc, char **argv) {
    CLI::App app{"Submits one exclusive slurm-jail-nccl-check job per node that can take one "
                 "now (skips down, drained, draining and unresponsive nodes; a node the new-node "
                 "gate holds gets its job in the gate's reservation), or with --fabric "
                 "one exclusive slurm-jail-nccl-fabric job across all of them. The config file's "
                 "[nccl-check] section ([nccl-fabric] with --fabric) and the arguments after -- "
                 "go to the check.",
                 "slurm-jail-nccl-submit"};
    Options o;
    add_config_option(app, o.config, "nccl-submit");
    app.add_option("--partition,-p", o.partition, "Only nodes of this partition");
    repeatable(app.add_option("--sbatch-arg", o.sbatch_args, "Extra sbatch argument (repeatable)"));
    app.add_option("--check-command", o.check_command,
                   "slurm-jail-nccl-check's absolute path where the job runs: inside the jail")
        ->capture_default_str();
    app.add_flag("--fabric", o.fabric,
                 "One job across all eligible nodes running --fabric-command (the multi-node "
                 "check) instead of one job per node");
    app.add_option("--fabric-command", o.fabric_command,
                   "slurm-jail-nccl-fabric's absolute path where the job runs: inside the jail")
        ->capture_default_str();
    app.add_option("--job-name", o.job_name,
                   "Job name (default: slurm-jail-nccl-check, with --fabric "
                   "slurm-jail-nccl-fabric)");
    app.add_option("--sinfo", o.sinfo, "sinfo to use")->capture_default_str();
    app.add_option("--scontrol", o.scontrol,
                   "scontrol to use (reads the new-node gate's reservations)")
        ->capture_default_str();
    app.add_option("--sbatch", o.sbatch, "sbatch to use")->capture_default_str();
    app.add_flag("--dry-run", o.dry_run, "Print the sbatch commands, submit nothing");
    app.add_option("check_args", o.check_args,
                   "Arguments for slurm-jail-nccl-check, or slurm-jail-nccl-fabric with --fabric "
                   "(after --)")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    return parse_and_run(app, argc, argv, "nccl-submit", [&] { return run(o); });
}

} // namespace

int main(int argc, char **argv) {
    return sjh::guarded_main([&] { return run_main(argc, argv); });
}
