// SPDX-License-Identifier: Apache-2.0
// Glue shared by the checks: count consecutive failures, read the node's
// state, decide, and drain/resume, hold/release with the new-node gate's
// reservation (or print what would happen with dry-run).
#pragma once

#include "gate.hpp"
#include "reason.hpp"
#include "slurm_client.hpp"

#include <cstdio>
#include <optional>
#include <string>

namespace sjh {

struct ActionSettings {
    std::string node;
    std::string state_file; // consecutive-failure counter
    unsigned drain_after = 1;
    bool dry_run = false;
};

// The new-node gate, for the checks it waits for (gate.hpp).
struct GateSettings {
    std::string dir;       // where the gate's records are
    NodeIdentity identity; // the node's now
};

// Returns the decided action (after doing it unless dry_run). Throws
// SlurmError / std::runtime_error before changing anything if the node's state
// cannot be read, or the state file is corrupt or in a directory another user
// could write (UntrustedPath). With `gate`, a pass is recorded for the gate,
// the action is the gate's (apply_gate), and the gate's reservation is made
// before the drain or resume, or removed after it (plan_hold); a reservation
// of someone else under the gate's name throws GateReservationTaken before
// anything changes. `check` is "gpu" or "nccl" then.
Action act_on_outcome(const SlurmClient &slurm, const ActionSettings &s, const std::string &check,
                      bool passed, const std::string &cause, std::FILE *out,
                      const std::optional<GateSettings> &gate = std::nullopt);

} // namespace sjh
