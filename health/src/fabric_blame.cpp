// SPDX-License-Identifier: Apache-2.0
#include "fabric_blame.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdexcept>

namespace sjh {
namespace {

bool contains(const NodeGroup &group, const std::string &node) {
    return std::find(group.begin(), group.end(), node) != group.end();
}

std::vector<std::string> failed_group_names(const std::vector<GroupResult> &groups) {
    std::vector<std::string> names;
    for (const auto &g : groups) {
        if (!g.pass) {
            names.push_back(group_name(g.nodes));
        }
    }
    return names;
}

// The node that explains every failure alone, if there is one.
std::optional<std::string> single_culprit(const std::vector<std::string> &nodes,
                                          const std::vector<GroupResult> &groups) {
    for (const auto &node : nodes) {
        bool in_any = false;
        bool explains = true;
        for (const auto &g : groups) {
            const bool in = contains(g.nodes, node);
            in_any = in_any || in;
            // Every group with it fails, every group without it passes.
            explains = explains && (in ? !g.pass : g.pass);
        }
        if (in_any && explains) {
            return node;
        }
    }
    return std::nullopt;
}

std::string culprit_evidence(const std::string &culprit, const std::vector<GroupResult> &groups) {
    std::vector<std::string> with;
    unsigned without = 0;
    std::optional<double> lowest;
    for (const auto &g : groups) {
        if (contains(g.nodes, culprit)) {
            with.push_back(group_evidence(g));
        } else {
            ++without;
            if (g.busbw && (!lowest || *g.busbw < *lowest)) {
                lowest = g.busbw;
            }
        }
    }
    const auto low = lowest ? fmt::format(" (lowest {:.2f})", *lowest) : std::string();
    return fmt::format("busbw GB/s in its groups: {}; the {} group(s) without it passed{}",
                       fmt::join(with, ", "), without, low);
}

} // namespace

std::vector<std::vector<NodeGroup>> plan_pair_rounds(const std::vector<std::string> &nodes) {
    const auto n = nodes.size();
    if (n < 3) {
        return {};
    }
    // Pair i is nodes i and i+1 (the last wraps to the first). Pairs i and
    // i+2 share no node, so even and odd pairs make two rounds; with an odd
    // count the wrapping pair shares a node with pair 0 and pair n-2, so it
    // runs alone in a third.
    std::vector<std::vector<NodeGroup>> rounds(n % 2 == 0 ? 2 : 3);
    for (std::size_t i = 0; i < n; ++i) {
        NodeGroup pair{nodes[i], nodes[(i + 1) % n]};
        const auto round = (n % 2 == 1 && i == n - 1) ? 2 : i % 2;
        rounds[round].push_back(std::move(pair));
    }
    return rounds;
}

std::string group_name(const NodeGroup &group) {
    return fmt::format("{}", fmt::join(group, "+"));
}

std::string group_evidence(const GroupResult &result) {
    if (result.busbw) {
        return fmt::format("{} {:.2f}", group_name(result.nodes), *result.busbw);
    }
    return fmt::format("{} {}", group_name(result.nodes), result.pass ? "passed" : "failed");
}

Blame blame_groups(const std::vector<std::string> &nodes, const std::vector<GroupResult> &groups) {
    Blame b;
    for (const auto &node : nodes) {
        const bool cleared = std::any_of(groups.begin(), groups.end(), [&](const GroupResult &g) {
            return g.pass && contains(g.nodes, node);
        });
        if (cleared) {
            b.cleared.push_back(node);
        }
    }
    const auto failed = failed_group_names(groups);
    if (groups.empty()) {
        b.summary = "no smaller groups to run (fewer than 3 nodes): no node can be singled out";
    } else if (failed.empty()) {
        b.summary = fmt::format("all {} groups passed: the failure across all nodes is not one "
                                "node's; nobody is drained",
                                groups.size());
    } else if (auto culprit = single_culprit(nodes, groups)) {
        b.evidence = culprit_evidence(*culprit, groups);
        b.summary = fmt::format("{} failed in every group it was in, and every group without it "
                                "passed",
                                *culprit);
        b.culprit = std::move(culprit);
    } else {
        b.summary = fmt::format("{} of {} groups failed ({}): no single node explains that; "
                                "nobody is drained",
                                failed.size(), groups.size(), fmt::join(failed, ", "));
    }
    return b;
}

unsigned drain_limit(unsigned tested, double fraction) {
    if (!(fraction >= 0.0 && fraction <= 1.0)) {
        throw std::invalid_argument(fmt::format(
            "drain fraction {} is not between 0 and 1: pass e.g. --max-drain-fraction 0.25",
            fraction));
    }
    // A small tolerance, so that 0.5 of 4 is 2 even if 0.5 * 4 were 1.999...
    return static_cast<unsigned>(std::floor(fraction * static_cast<double>(tested) + 1e-9));
}

} // namespace sjh
