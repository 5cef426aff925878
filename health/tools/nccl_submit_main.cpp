// SPDX-License-Identifier: Apache-2.0
// slurm-jail-nccl-submit: the CronJob-friendly driver. Submits one exclusive
// job per eligible node, each running slurm-jail-nccl-check on that node,
// inside the jail. See man/slurm-jail-nccl-submit.8.
#include "config_file.hpp"
#include "slurm_client.hpp"
#include "slurm_text.hpp"

#include "program_main.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace {

using namespace sjh;

// Where the check is in the jail, where its job runs (docs/contract.md).
constexpr const char *kDefaultCheckCommand = "/usr/sbin/slurm-jail-nccl-check";

struct Options {
    std::string config = kDefaultConfig;
    std::string partition;
    std::string check_command = kDefaultCheckCommand;
    std::vector<std::string> sbatch_args;
    std::vector<std::string> check_args;
    std::string job_name = "slurm-jail-nccl-check";
    std::string sinfo = "sinfo";
    std::string sbatch = "sbatch";
    bool dry_run = false;
};

std::string wrap_command(const Options &o, const std::string &node) {
    std::string cmd = "exec " + shell_quote(o.check_command) + " --node " + shell_quote(node);
    for (const auto &a : o.check_args) {
        cmd += " " + shell_quote(a);
    }
    return cmd;
}

int run(Options &o) {
    if (!o.check_command.starts_with('/')) {
        throw std::invalid_argument(fmt::format(
            "--check-command '{}' is not an absolute path: the job runs it as root, so it must "
            "not be looked up in the job's PATH",
            o.check_command));
    }
    // The check runs inside the jail, which need not have this config file:
    // its [nccl-check] section travels on the check's command line, before
    // the arguments given after --, which win.
    auto check_args = config_section_args(o.config, "nccl-check", false);
    check_args.insert(check_args.end(), o.check_args.begin(), o.check_args.end());
    o.check_args = check_args;
    SlurmTools tools;
    tools.sinfo = o.sinfo;
    tools.sbatch = o.sbatch;
    const SlurmClient slurm(tools);
    const auto nodes = slurm.list_nodes(o.partition);
    unsigned submitted = 0;
    unsigned skipped = 0;
    for (const auto &n : nodes) {
        if (!eligible_for_nccl(n.state)) {
            fmt::print("skip {}: state {}\n", n.name, n.state);
            ++skipped;
            continue;
        }
        std::vector<std::string> args{"--exclusive", "--nodes=1", "--nodelist=" + n.name,
                                      "--job-name=" + o.job_name};
        if (!o.partition.empty()) {
            args.push_back("--partition=" + o.partition);
        }
        args.insert(args.end(), o.sbatch_args.begin(), o.sbatch_args.end());
        args.push_back("--wrap=" + wrap_command(o, n.name));
        if (o.dry_run) {
            fmt::print("dry-run: would submit for {}: {} {}\n", n.name, o.sbatch,
                       fmt::join(args, " "));
        } else {
            auto out = slurm.submit(args);
            while (!out.empty() && out.back() == '\n') {
                out.pop_back();
            }
            fmt::print("{}: {}\n", n.name, out);
        }
        ++submitted;
    }
    fmt::print("{} {} job(s), skipped {} node(s)\n", o.dry_run ? "would submit" : "submitted",
               submitted, skipped);
    return 0;
}

int run_main(int argc, char **argv) {
    CLI::App app{"Submits one exclusive slurm-jail-nccl-check job per node that can take one "
                 "now (skips down, drained, draining and unresponsive nodes). The config file's "
                 "[nccl-check] section and the arguments after -- go to slurm-jail-nccl-check.",
                 "slurm-jail-nccl-submit"};
    Options o;
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--config", o.config,
                   "Config file; its [nccl-submit] section holds defaults for these options")
        ->capture_default_str();
    app.add_option("--partition,-p", o.partition, "Only nodes of this partition");
    repeatable(app.add_option("--sbatch-arg", o.sbatch_args, "Extra sbatch argument (repeatable)"));
    app.add_option("--check-command", o.check_command,
                   "slurm-jail-nccl-check's absolute path where the job runs: inside the jail")
        ->capture_default_str();
    app.add_option("--job-name", o.job_name, "Job name")->capture_default_str();
    app.add_option("--sinfo", o.sinfo, "sinfo to use")->capture_default_str();
    app.add_option("--sbatch", o.sbatch, "sbatch to use")->capture_default_str();
    app.add_flag("--dry-run", o.dry_run, "Print the sbatch commands, submit nothing");
    app.add_option("check_args", o.check_args, "Arguments for slurm-jail-nccl-check (after --)")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    return parse_and_run(app, argc, argv, "nccl-submit", [&] { return run(o); });
}

} // namespace

int main(int argc, char **argv) {
    return sjh::guarded_main([&] { return run_main(argc, argv); });
}
