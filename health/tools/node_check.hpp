// SPDX-License-Identifier: Apache-2.0
// What the two checks that drain and resume their own node share around their
// own work: the options, finding the node's name, and acting on the outcome.
#pragma once

#include "gate_file.hpp"
#include "gpu_snapshot.hpp"
#include "node_action.hpp"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
void act_on_node(const NodeActionOptions &o, const CheckResult &result, int scontrol_timeout_s,
                 const std::optional<GateSettings> &gate = std::nullopt);

// The new-node gate's options, for the two checks it waits for (gate.hpp).
struct GateOptions {
    bool gate = false;
    std::string gate_dir; // default: --state-dir
    std::string boot_id_file = kDefaultBootIdFile;
};

void add_gate_options(CLI::App &app, GateOptions &g);

// --gate-dir, else --state-dir.
std::string gate_dir(const NodeActionOptions &o, const GateOptions &g);

// The GPUs' serials as NVML gave them.
std::vector<std::string> gpu_serials(const NodeSnapshot &snapshot);

// With --gate (and unless --no-drain): where the records are and the node's
// identity now. Throws naming --boot-id-file when the boot id is unreadable.
std::optional<GateSettings> gate_settings(const NodeActionOptions &o, const GateOptions &g,
                                          const std::vector<std::string> &serials);

// The gate's state for the node (gate-status), as text or JSON, on stdout.
void print_gate_status(const NodeActionOptions &o, const GateOptions &g,
                       const std::vector<std::string> &serials);

} // namespace sjh
