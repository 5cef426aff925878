// SPDX-License-Identifier: Apache-2.0
// The multi-node NCCL check's search for a culprit (pure): which smaller
// groups to run after a failed run across all nodes, which node the groups'
// results blame, and how many nodes one run may drain.
//
// Groups are pairs laid on a ring (node i with node i+1, the last with the
// first), so that every node is in exactly two groups and every group holds
// two nodes; with three or more nodes a single bad node is the only one whose
// two groups both fail while every other group passes. The pairs come in
// rounds of disjoint groups (two rounds for an even count, three for an
// odd), which can run at the same time.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sjh {

using NodeGroup = std::vector<std::string>;

// Rounds of disjoint pairs covering the ring. Fewer than three nodes: no
// pairs (two nodes are already one pair; one node has no fabric to test).
std::vector<std::vector<NodeGroup>> plan_pair_rounds(const std::vector<std::string> &nodes);

// "node1+node2".
std::string group_name(const NodeGroup &group);

// One group's run, as judged by judge_nccl.
struct GroupResult {
    NodeGroup nodes;
    bool pass = false;
    std::optional<double> busbw; // GB/s at the largest size, when it printed one
    std::string cause;           // why it failed (empty on pass)
};

// "node1+node2 5.00" (busbw) or "node1+node2 failed" (no bandwidth printed).
std::string group_evidence(const GroupResult &result);

struct Blame {
    // The one node that failed in every group it was in while every group
    // without it passed; empty when no single node explains the failures.
    std::optional<std::string> culprit;
    // Nodes in at least one passing group: the fabric works for them.
    std::vector<std::string> cleared;
    // One line: what the groups showed and what it means.
    std::string summary;
    // For the culprit's drain reason: its groups' busbw, then how many
    // groups without it passed.
    std::string evidence;
};

// Blames at most one node. A group failure that no single node explains
// (two bad nodes, a switch, every group failing) blames nobody.
Blame blame_groups(const std::vector<std::string> &nodes, const std::vector<GroupResult> &groups);

// The most nodes a run that tested `tested` nodes may drain: the fraction
// rounded down (0.25 of 4 nodes is 1, of 3 nodes 0). Throws
// std::invalid_argument for a fraction outside [0, 1].
unsigned drain_limit(unsigned tested, double fraction);

} // namespace sjh
