// SPDX-License-Identifier: Apache-2.0
#include "fabric_blame.hpp"

#include <gtest/gtest.h>
#include <map>
#include <set>

namespace sjh {
namespace {

const std::vector<std::string> kFour = {"n1", "n2", "n3", "n4"};
const std::vector<std::string> kThree = {"n1", "n2", "n3"};

// Every pair the rounds run, with the pairs of one round disjoint.
std::vector<NodeGroup> all_pairs(const std::vector<std::vector<NodeGroup>> &rounds) {
    std::vector<NodeGroup> pairs;
    for (const auto &round : rounds) {
        std::set<std::string> seen;
        for (const auto &g : round) {
            EXPECT_EQ(g.size(), 2U);
            for (const auto &n : g) {
                EXPECT_TRUE(seen.insert(n).second) << n << " twice in one round";
            }
            pairs.push_back(g);
        }
    }
    return pairs;
}

// The groups' results when the nodes in `bad` slow every group they are in.
std::vector<GroupResult> run_with_bad(const std::vector<std::string> &nodes,
                                      const std::set<std::string> &bad) {
    std::vector<GroupResult> results;
    for (const auto &g : all_pairs(plan_pair_rounds(nodes))) {
        const bool slow = bad.contains(g[0]) || bad.contains(g[1]);
        results.push_back({g, !slow, slow ? 5.0 : 40.0, slow ? "busbw 5.00 GB/s" : ""});
    }
    return results;
}

TEST(FabricPlan, RingOfPairsEveryNodeInTwoGroups) {
    for (const auto &nodes : {kThree, kFour, std::vector<std::string>{"a", "b", "c", "d", "e"}}) {
        const auto rounds = plan_pair_rounds(nodes);
        EXPECT_EQ(rounds.size(), nodes.size() % 2 == 0 ? 2U : 3U);
        const auto pairs = all_pairs(rounds);
        EXPECT_EQ(pairs.size(), nodes.size());
        std::map<std::string, int> count;
        std::set<NodeGroup> distinct;
        for (const auto &p : pairs) {
            EXPECT_NE(p[0], p[1]);
            ++count[p[0]];
            ++count[p[1]];
            distinct.insert({std::min(p[0], p[1]), std::max(p[0], p[1])});
        }
        EXPECT_EQ(distinct.size(), pairs.size());
        for (const auto &n : nodes) {
            EXPECT_EQ(count[n], 2) << n;
        }
    }
}

TEST(FabricPlan, FourNodesInTwoRounds) {
    const auto rounds = plan_pair_rounds(kFour);
    ASSERT_EQ(rounds.size(), 2U);
    EXPECT_EQ(rounds[0], (std::vector<NodeGroup>{{"n1", "n2"}, {"n3", "n4"}}));
    EXPECT_EQ(rounds[1], (std::vector<NodeGroup>{{"n2", "n3"}, {"n4", "n1"}}));
}

TEST(FabricPlan, TooFewNodesForPairs) {
    EXPECT_TRUE(plan_pair_rounds({"n1", "n2"}).empty());
    EXPECT_TRUE(plan_pair_rounds({"n1"}).empty());
    EXPECT_TRUE(plan_pair_rounds({}).empty());
}

TEST(FabricBlame, OneBadNodeIsTheCulpritWithEvidence) {
    for (const auto &bad : kFour) {
        const auto b = blame_groups(kFour, run_with_bad(kFour, {bad}));
        ASSERT_TRUE(b.culprit) << bad << ": " << b.summary;
        EXPECT_EQ(*b.culprit, bad);
        EXPECT_EQ(b.cleared.size(), 3U);
        EXPECT_EQ(std::count(b.cleared.begin(), b.cleared.end(), bad), 0);
    }
    const auto b = blame_groups(kFour, run_with_bad(kFour, {"n3"}));
    EXPECT_EQ(b.summary, "n3 failed in every group it was in, and every group without it passed");
    EXPECT_EQ(b.evidence, "busbw GB/s in its groups: n3+n4 5.00, n2+n3 5.00; the 2 group(s) "
                          "without it passed (lowest 40.00)");
    // Three nodes are the fewest that single one out.
    const auto b3 = blame_groups(kThree, run_with_bad(kThree, {"n2"}));
    ASSERT_TRUE(b3.culprit);
    EXPECT_EQ(*b3.culprit, "n2");
    EXPECT_EQ(b3.cleared, (std::vector<std::string>{"n1", "n3"}));
}

TEST(FabricBlame, TwoBadNodesAmongThreeBlameNobody) {
    const auto b = blame_groups(kThree, run_with_bad(kThree, {"n1", "n2"}));
    EXPECT_FALSE(b.culprit);
    EXPECT_TRUE(b.cleared.empty());
    EXPECT_EQ(b.summary, "3 of 3 groups failed (n1+n2, n2+n3, n3+n1): no single node explains "
                         "that; nobody is drained");
    EXPECT_TRUE(b.evidence.empty());
}

TEST(FabricBlame, TwoBadNodesAmongFourBlameNobodyButClearTheOthers) {
    // Adjacent: n4+n1... n3+n4 passes, so n3 and n4 are cleared.
    const auto b = blame_groups(kFour, run_with_bad(kFour, {"n1", "n2"}));
    EXPECT_FALSE(b.culprit);
    EXPECT_EQ(b.cleared, (std::vector<std::string>{"n3", "n4"}));
    // Opposite: every pair has one of them.
    const auto b2 = blame_groups(kFour, run_with_bad(kFour, {"n1", "n3"}));
    EXPECT_FALSE(b2.culprit);
    EXPECT_TRUE(b2.cleared.empty());
}

TEST(FabricBlame, AllGroupsPassingBlamesNobody) {
    const auto b = blame_groups(kFour, run_with_bad(kFour, {}));
    EXPECT_FALSE(b.culprit);
    EXPECT_EQ(b.cleared, kFour);
    EXPECT_EQ(b.summary,
              "all 4 groups passed: the failure across all nodes is not one node's; nobody is "
              "drained");
}

TEST(FabricBlame, OneFailingGroupIsNotANode) {
    // A bad link between n2 and n3 only: each of them passes its other pair.
    auto results = run_with_bad(kFour, {});
    for (auto &r : results) {
        if (r.nodes == NodeGroup{"n2", "n3"}) {
            r.pass = false;
            r.busbw.reset();
            r.cause = "all_reduce_perf exited with code 3 (NCCL error)";
        }
    }
    const auto b = blame_groups(kFour, results);
    EXPECT_FALSE(b.culprit);
    EXPECT_EQ(b.cleared, kFour);
    EXPECT_EQ(b.summary, "1 of 4 groups failed (n2+n3): no single node explains that; nobody is "
                         "drained");
}

TEST(FabricBlame, FailedGroupWithoutBandwidthInEvidence) {
    auto results = run_with_bad(kFour, {"n2"});
    results[0].busbw.reset(); // n1+n2 crashed
    const auto b = blame_groups(kFour, results);
    ASSERT_TRUE(b.culprit);
    EXPECT_EQ(b.evidence, "busbw GB/s in its groups: n1+n2 failed, n2+n3 5.00; the 2 group(s) "
                          "without it passed (lowest 40.00)");
}

TEST(FabricBlame, NoGroups) {
    const auto b = blame_groups({"n1", "n2"}, {});
    EXPECT_FALSE(b.culprit);
    EXPECT_EQ(b.summary,
              "no smaller groups to run (fewer than 3 nodes): no node can be singled out");
}

TEST(FabricBlame, DrainLimitIsTheFractionRoundedDown) {
    EXPECT_EQ(drain_limit(4, 0.25), 1U);
    EXPECT_EQ(drain_limit(3, 0.25), 0U);
    EXPECT_EQ(drain_limit(7, 0.25), 1U);
    EXPECT_EQ(drain_limit(8, 0.25), 2U);
    EXPECT_EQ(drain_limit(3, 0.34), 1U);
    EXPECT_EQ(drain_limit(10, 0.3), 3U);
    EXPECT_EQ(drain_limit(4, 0), 0U);
    EXPECT_EQ(drain_limit(4, 1), 4U);
    EXPECT_THROW((void)drain_limit(4, 1.5), std::invalid_argument);
    EXPECT_THROW((void)drain_limit(4, -0.1), std::invalid_argument);
}

} // namespace
} // namespace sjh
