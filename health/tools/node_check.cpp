// SPDX-License-Identifier: Apache-2.0
#include "node_check.hpp"

#include "node_action.hpp"
#include "trusted_files.hpp"

#include <cstdlib>
#include <fmt/format.h>
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

void act_on_node(const NodeActionOptions &o, const CheckResult &result, int scontrol_timeout_s) {
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
                   o.json ? stderr : stdout);
}

} // namespace sjh
