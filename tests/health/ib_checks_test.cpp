// SPDX-License-Identifier: Apache-2.0
#include "ib_checks.hpp"
#include "reason.hpp"

#include <algorithm>
#include <gtest/gtest.h>

namespace sjh {
namespace {

// A ConnectX-7 port up at NDR, as its sysfs files read.
IbPortReading ndr(const std::string &name, std::uint64_t link_downed = 0,
                  std::uint64_t symbol_error = 0) {
    IbPortReading p;
    p.name = name;
    p.state = "4: ACTIVE";
    p.phys_state = "5: LinkUp";
    p.rate = "400 Gb/sec (4X NDR)";
    p.link_layer = "InfiniBand";
    p.link_downed = link_downed;
    p.symbol_error = symbol_error;
    return p;
}

IbPortReading down(const std::string &name) {
    auto p = ndr(name);
    p.state = "1: DOWN";
    p.phys_state = "3: Disabled";
    p.rate = "10 Gb/sec (4X SDR)"; // what mlx5 reports for a port without link
    return p;
}

// An mlx5 RoCE port: the same files, link_layer Ethernet.
IbPortReading roce(const std::string &name) {
    auto p = ndr(name);
    p.rate = "100 Gb/sec (4X EDR)";
    p.link_layer = "Ethernet";
    return p;
}

// What a node with two NDR ports left at its last passing run.
IbState passed_at_ndr() {
    IbState s;
    s.passed_rates = {{"mlx5_0/1", 400}, {"mlx5_1/1", 400}};
    s.counters = {{"mlx5_0/1", {0, 0}}, {"mlx5_1/1", {0, 0}}};
    return s;
}

Evaluation run(const std::vector<IbPortReading> &ports, const IbCheckConfig &cfg = {},
               const IbState &previous = {}) {
    Evaluation e;
    evaluate_ib(ports, cfg, previous, e);
    return e;
}

bool status_ok(const Evaluation &e, const std::string &check) {
    const auto it = std::find_if(e.statuses.begin(), e.statuses.end(),
                                 [&](const CheckStatus &s) { return s.check == check; });
    EXPECT_NE(it, e.statuses.end()) << "no status " << check;
    return it != e.statuses.end() && it->ok;
}

TEST(IbChecks, HealthyNdrNodePasses) {
    const auto e = run({ndr("mlx5_0/1"), ndr("mlx5_1/1")}, {}, passed_at_ndr());
    EXPECT_TRUE(e.problems.empty());
    EXPECT_FALSE(e.must_drain());
    EXPECT_EQ(e.statuses.size(), 4U);
    for (const auto *check : {"ib_port", "ib_rate", "ib_link_downed", "ib_symbol_error"}) {
        EXPECT_TRUE(status_ok(e, check)) << check;
    }
}

TEST(IbChecks, NoPortsAndNothingExpectedSaysNothing) {
    const auto e = run({});
    EXPECT_TRUE(e.problems.empty());
    EXPECT_TRUE(e.statuses.empty());
}

TEST(IbChecks, ExpectedPortDownDrains) {
    const auto e = run({ndr("mlx5_0/1"), down("mlx5_1/1")}, {}, passed_at_ndr());
    ASSERT_EQ(e.problems.size(), 1U);
    EXPECT_EQ(e.problems[0].check, "ib_port");
    EXPECT_EQ(e.problems[0].severity, Severity::drain);
    EXPECT_EQ(e.problems[0].message,
              "IB port mlx5_1/1: state DOWN, physical state Disabled (expected ACTIVE, LinkUp)");
    EXPECT_FALSE(status_ok(e, "ib_port"));
    EXPECT_TRUE(status_ok(e, "ib_rate"));
}

TEST(IbChecks, UnusedPortDownIsNotExpectedOnTheFirstRun) {
    // A dual-port HCA with one cable: no passing run recorded yet.
    const auto e = run({ndr("mlx5_0/1"), down("mlx5_0/2")});
    EXPECT_TRUE(e.problems.empty());
    EXPECT_EQ(expected_ib_ports({ndr("mlx5_0/1"), down("mlx5_0/2")}, {}, {}),
              (std::vector<std::string>{"mlx5_0/1"}));
}

TEST(IbChecks, ExpectedPortMissingDrains) {
    // The HCA vanished (driver not loaded, card off the bus).
    const auto e = run({ndr("mlx5_0/1")}, {}, passed_at_ndr());
    ASSERT_EQ(e.problems.size(), 1U);
    EXPECT_EQ(e.problems[0].severity, Severity::drain);
    EXPECT_EQ(e.problems[0].message, "IB port mlx5_1/1: missing (no such HCA or port in sysfs)");
    // Configured ports are expected even on a node without any RDMA device.
    IbCheckConfig cfg;
    cfg.ports = {"mlx5_0/1"};
    EXPECT_TRUE(run({}, cfg).must_drain());
}

TEST(IbChecks, ConfiguredPortsReplaceTheRecordedOnes) {
    IbCheckConfig cfg;
    cfg.ports = {"mlx5_0/1"};
    EXPECT_FALSE(run({ndr("mlx5_0/1"), down("mlx5_1/1")}, cfg, passed_at_ndr()).must_drain());
}

TEST(IbChecks, HalfRateDrainsAgainstTheLastPassingRate) {
    auto hdr = ndr("mlx5_1/1");
    hdr.rate = "200 Gb/sec (4X HDR)";
    const auto e = run({ndr("mlx5_0/1"), hdr}, {}, passed_at_ndr());
    ASSERT_EQ(e.problems.size(), 1U);
    EXPECT_EQ(e.problems[0].check, "ib_rate");
    EXPECT_EQ(e.problems[0].severity, Severity::drain);
    EXPECT_EQ(e.problems[0].message,
              "IB port mlx5_1/1: rate 200 Gb/sec (4X HDR), below the expected 400 Gb/s");
    EXPECT_FALSE(status_ok(e, "ib_rate"));
}

TEST(IbChecks, ConfiguredMinRateWinsOverTheRecordedRate) {
    auto hdr = ndr("mlx5_1/1");
    hdr.rate = "200 Gb/sec (4X HDR)";
    IbCheckConfig cfg;
    cfg.min_rate_gbps = 400;
    EXPECT_TRUE(run({hdr}).problems.empty()); // first run: no rate known yet
    EXPECT_TRUE(run({hdr}, cfg).must_drain());
    cfg.min_rate_gbps = 200;
    EXPECT_FALSE(run({ndr("mlx5_0/1"), hdr}, cfg, passed_at_ndr()).must_drain());
}

TEST(IbChecks, RoceAtItsRatePassesAndIsNamedRoce) {
    IbState previous;
    previous.passed_rates = {{"mlx5_2/1", 100}};
    EXPECT_TRUE(run({roce("mlx5_2/1")}, {}, previous).problems.empty());
    IbCheckConfig cfg;
    cfg.min_rate_gbps = 200;
    const auto e = run({roce("mlx5_2/1")}, cfg, previous);
    ASSERT_EQ(e.problems.size(), 1U);
    EXPECT_EQ(e.problems[0].message,
              "RoCE port mlx5_2/1: rate 100 Gb/sec (4X EDR), below the expected 200 Gb/s");
}

TEST(IbChecks, UnreadableRateWarns) {
    auto odd = ndr("mlx5_0/1");
    odd.rate = "";
    IbCheckConfig cfg;
    cfg.min_rate_gbps = 400;
    const auto e = run({odd}, cfg);
    ASSERT_EQ(e.problems.size(), 1U);
    EXPECT_EQ(e.problems[0].severity, Severity::warn);
    EXPECT_FALSE(e.must_drain());
}

TEST(IbChecks, LinkDownedGrowthDrains) {
    const auto e = run({ndr("mlx5_0/1", 2), ndr("mlx5_1/1")}, {}, passed_at_ndr());
    ASSERT_EQ(e.problems.size(), 1U);
    EXPECT_EQ(e.problems[0].check, "ib_link_downed");
    EXPECT_EQ(e.problems[0].severity, Severity::drain);
    EXPECT_EQ(e.problems[0].message,
              "IB port mlx5_0/1: link went down 2 times since the last run (link_downed 0 -> 2)");
    EXPECT_FALSE(status_ok(e, "ib_link_downed"));
}

TEST(IbChecks, CounterResetIsNoGrowth) {
    auto previous = passed_at_ndr();
    previous.counters["mlx5_0/1"] = {7, 900}; // before a reboot
    EXPECT_TRUE(run({ndr("mlx5_0/1"), ndr("mlx5_1/1")}, {}, previous).problems.empty());
    EXPECT_EQ(counter_growth(5, 3), 2U);
    EXPECT_EQ(counter_growth(3, 5), 0U);
    EXPECT_EQ(counter_growth(std::nullopt, 5), std::nullopt);
    EXPECT_EQ(counter_growth(5, std::nullopt), std::nullopt);
}

TEST(IbChecks, SymbolErrorGrowthIsReportedAndDrainsOnlyAboveTheLimit) {
    const std::vector<IbPortReading> ports{ndr("mlx5_0/1", 0, 12), ndr("mlx5_1/1")};
    const auto reported = run(ports, {}, passed_at_ndr());
    ASSERT_EQ(reported.problems.size(), 1U);
    EXPECT_EQ(reported.problems[0].check, "ib_symbol_error");
    EXPECT_EQ(reported.problems[0].severity, Severity::warn);
    EXPECT_EQ(reported.problems[0].message,
              "IB port mlx5_0/1: 12 new symbol errors since the last run (symbol_error 0 -> 12)");
    EXPECT_FALSE(reported.must_drain());
    EXPECT_FALSE(status_ok(reported, "ib_symbol_error"));

    IbCheckConfig cfg;
    cfg.symbol_error_drain = 12;
    EXPECT_FALSE(run(ports, cfg, passed_at_ndr()).must_drain()); // not more than the limit
    cfg.symbol_error_drain = 11;
    const auto drained = run(ports, cfg, passed_at_ndr());
    ASSERT_EQ(drained.problems.size(), 1U);
    EXPECT_TRUE(drained.must_drain());
    EXPECT_NE(drained.problems[0].message.find("more than --ib-symbol-error-drain 11"),
              std::string::npos)
        << drained.problems[0].message;
}

TEST(IbChecks, DrainReasonIsTheQuickChecksOwn) {
    const auto e = run({down("mlx5_0/1"), ndr("mlx5_1/1")}, {}, passed_at_ndr());
    const auto reason = make_reason("gpu", e.cause());
    EXPECT_EQ(reason, "slurm-jail-health: gpu: IB port mlx5_0/1: state DOWN, physical state "
                      "Disabled (expected ACTIVE, LinkUp)");
    EXPECT_TRUE(is_reason_of_check(reason, "gpu"));
}

TEST(IbState, PassingRunRecordsThePortsUpNow) {
    auto hdr = ndr("mlx5_1/1", 1, 4);
    hdr.rate = "200 Gb/sec (4X HDR)";
    const auto next = next_ib_state({ndr("mlx5_0/1", 3, 5), hdr, down("mlx5_0/2")}, {}, true);
    EXPECT_EQ(next.passed_rates,
              (std::map<std::string, double>{{"mlx5_0/1", 400}, {"mlx5_1/1", 200}}));
    EXPECT_EQ(next.counters.at("mlx5_0/1"), (IbCounters{3, 5}));
    EXPECT_EQ(next.counters.at("mlx5_1/1"), (IbCounters{1, 4}));
    EXPECT_EQ(next.counters.size(), 3U); // the down port's counters too
}

TEST(IbState, FailedRunKeepsTheExpectationAndUpdatesCounters) {
    const auto next = next_ib_state({ndr("mlx5_0/1", 2), down("mlx5_1/1")}, passed_at_ndr(), false);
    EXPECT_EQ(next.passed_rates, passed_at_ndr().passed_rates);
    EXPECT_EQ(next.counters.at("mlx5_0/1"), (IbCounters{2, 0}));
}

TEST(IbState, FileRoundTrip) {
    auto s = passed_at_ndr();
    s.counters["mlx5_2/1"] = {std::nullopt, 17};
    const auto text = render_ib_state(s);
    EXPECT_EQ(parse_ib_state(text), s);
    EXPECT_NE(text.find(R"("mlx5_0/1":400)"), std::string::npos) << text;
}

TEST(IbState, CorruptTextIsAnError) {
    for (const char *bad :
         {"", "garbage", "{}", R"({"passed_rates": {}})", R"({"passed_rates": [], "counters": {}})",
          R"({"passed_rates": {"mlx5_0/1": "fast"}, "counters": {}})",
          R"({"passed_rates": {}, "counters": {"mlx5_0/1": {"link_downed": -1}}})"}) {
        EXPECT_THROW((void)parse_ib_state(bad), std::runtime_error) << bad;
    }
}

} // namespace
} // namespace sjh
