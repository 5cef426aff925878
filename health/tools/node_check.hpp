// SPDX-License-Identifier: Apache-2.0
// What the two checks that drain and resume their own node share around their
// own work: the options, finding the node's name, and acting on the outcome.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace sjh {

struct NodeActionOptions {
    std::string node;
    unsigned drain_after = 1;
    std::string state_dir = "/var/lib/slurm-jail/health";
    std::string scontrol = "scontrol";
    bool json = false;
    bool no_drain = false;
    bool dry_run = false;
};

void add_node_action_options(CLI::App &app, NodeActionOptions &o);

// --node, else $SLURMD_NODENAME. Without either only --no-drain may go on:
// the error starts with `usual_source`, where the name normally comes from.
void resolve_node_name(NodeActionOptions &o, std::string_view usual_source);

// Before the check's own work: --state-dir and --scontrol can be used (they
// exist where they must, and nobody but root can change them), so that a long
// check does not end in a configuration error. Nothing to do with --no-drain.
void check_node_action_paths(const NodeActionOptions &o);

struct CheckResult {
    std::string check;      // "gpu" or "nccl": the drain reason's check name
    std::string state_file; // the failure counter's file name in --state-dir
    bool passed = false;
    std::string cause; // why it failed
};

// Unless --no-drain: counts the failure, then drains or resumes the node (or
// prints what it would do with --dry-run). Progress goes to stdout, or to
// stderr with --json so that stdout stays machine-readable.
void act_on_node(const NodeActionOptions &o, const CheckResult &result, int scontrol_timeout_s);

} // namespace sjh
