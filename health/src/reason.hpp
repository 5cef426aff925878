// SPDX-License-Identifier: Apache-2.0
// Drain and resume decisions with one fixed reason prefix (pure).
//
// Every reason we set reads "slurm-jail-health: <check>: <cause>". A check
// resumes a node only when the node's current reason starts with
// "slurm-jail-health: <check>:", i.e. this same check drained it. A node
// drained for any other reason (an admin, another tool, our other check) is
// never touched.
#pragma once

#include <string>
#include <string_view>

namespace sjh {

inline constexpr std::string_view kReasonPrefix = "slurm-jail-health:";

// "slurm-jail-health: gpu: <cause>", on one line and at most kMaxReason chars.
inline constexpr std::size_t kMaxReason = 240;
std::string make_reason(std::string_view check, std::string_view cause);

bool is_our_reason(std::string_view reason);
bool is_reason_of_check(std::string_view reason, std::string_view check);

// What scontrol reports for a node.
struct NodeState {
    std::string name;
    std::string state;    // "IDLE+DRAIN", "DOWN*", "MIXED", ...
    std::string reason;   // without the trailing " [user@time]"
    bool drained() const; // DRAIN flag set (DRAINED or DRAINING)
    bool down() const;
};

enum class ActionKind { none, drain, resume };

struct Action {
    ActionKind kind = ActionKind::none;
    std::string reason; // for drain
    std::string why;    // one line for the log
};

struct CheckOutcome {
    std::string check; // "gpu" or "nccl"
    bool passed = false;
    std::string cause;                 // on failure
    unsigned consecutive_failures = 0; // including this run
    unsigned drain_after = 1;          // drain at this many consecutive failures
};

Action decide(const NodeState &node, const CheckOutcome &outcome);

} // namespace sjh
