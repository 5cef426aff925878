// SPDX-License-Identifier: Apache-2.0
// The new-node gate (pure): a node that is new, rebooted or has other GPUs
// than at its last pass takes no users' jobs until the quick check and the
// NCCL check have both passed on it since. Each check records its pass with
// the node's identity (boot id and GPU serials); the gate is open when both
// records carry the identity the node has now. The records' files:
// gate_file.hpp; how a held node is kept from users' jobs (a reservation):
// gate_reservation.hpp.
#pragma once

#include "reason.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sjh {

// The check name in the gate's reason: "slurm-jail-health: gate: ...". Earlier
// releases drained held nodes with it; such a drain is still the gate's own.
inline constexpr std::string_view kGateCheck = "gate";

// What makes this node this node since it booted.
struct NodeIdentity {
    std::string boot_id;                  // /proc/sys/kernel/random/boot_id
    std::vector<std::string> gpu_serials; // NVML's, sorted
    bool operator==(const NodeIdentity &) const = default;
};

// Sorts the serials, so that the GPUs' order does not matter.
NodeIdentity make_identity(std::string boot_id, std::vector<std::string> gpu_serials);

// One check's last pass on the node.
struct GatePass {
    NodeIdentity identity;
    double time_s = 0; // unix time
};

// The checks the gate waits for: the quick check ("gpu") and the NCCL check
// ("nccl"), by the names of their drain reasons.
struct GateRecords {
    std::optional<GatePass> gpu;
    std::optional<GatePass> nccl;
};

// {"check": "gpu", "boot_id": "...", "gpu_serials": [...], "time": T}.
// parse throws std::runtime_error naming the expected form.
std::string render_gate_pass(std::string_view check, const GatePass &pass);
GatePass parse_gate_pass(std::string_view text, std::string_view check);

struct GateView {
    bool held = false;
    std::string cause;                // "new node", "new boot", "GPUs changed"
    std::vector<std::string> missing; // "the quick check", "the NCCL check"
    std::string reason;               // "slurm-jail-health: gate: ..." while held
};

// Whether the gate holds a node whose identity is `now`.
GateView view_gate(const NodeIdentity &now, const GateRecords &records);

// The check's own decision `check_action` with the gate applied. The gate
// holds with a reservation (plan_hold), not with a drain, so the check's
// decision stands; only a drain with the gate's reason (made by an earlier
// release) is resumed, held or not: the reservation, made first, keeps users'
// jobs off a held node. A node drained by anyone else is never touched.
Action apply_gate(const NodeState &node, const Action &check_action, const GateView &gate);

// The gate's state for an admin: what passed since when, what is missing.
std::string render_gate_status(std::string_view node, const NodeIdentity &now,
                               const GateRecords &records, const GateView &gate);

} // namespace sjh
