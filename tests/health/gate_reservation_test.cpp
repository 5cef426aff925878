// SPDX-License-Identifier: Apache-2.0
#include "gate_reservation.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

// What Slurm 22.05 prints for the reservation the gate makes.
constexpr const char *kOursText =
    "ReservationName=slurm-jail-gate-n1 StartTime=2026-11-28T22:51:31 "
    "EndTime=2027-11-28T22:51:31 Duration=365-00:00:00 Nodes=n1 NodeCnt=1 CoreCnt=1 "
    "Features=(null) PartitionName=(null) Flags=MAINT,IGNORE_JOBS,SPEC_NODES TRES=cpu=1 "
    "Users=root Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE BurstBuffer=(null) "
    "Watts=n/a MaxStartDelay=(null)\n";

Reservation ours(std::string state = "ACTIVE") {
    return {"slurm-jail-gate-n1", "n1", "root", "MAINT,IGNORE_JOBS,SPEC_NODES", std::move(state)};
}

const NodeIdentity kNow = make_identity("boot-b", {"1651"});
const GateView kHeld = view_gate(kNow, {});
const GateView kOpen = view_gate(kNow, {GatePass{kNow, 1}, GatePass{kNow, 1}});

TEST(GateReservation, ParsesScontrolOneLinePerReservation) {
    const auto all = parse_scontrol_reservations(
        std::string(kOursText) + "ReservationName=other StartTime=x Nodes=n[2-3] Users=alice "
                                 "Flags=SPEC_NODES State=INACTIVE\n");
    ASSERT_EQ(all.size(), 2U);
    EXPECT_EQ(all[0].name, "slurm-jail-gate-n1");
    EXPECT_EQ(all[0].nodes, "n1");
    EXPECT_EQ(all[0].users, "root");
    EXPECT_TRUE(all[0].active());
    EXPECT_EQ(all[1].nodes, "n[2-3]");
    EXPECT_FALSE(all[1].active());
    EXPECT_TRUE(parse_scontrol_reservations("No reservations in the system\n").empty());
    EXPECT_THROW((void)parse_scontrol_reservations("garbage\n"), std::runtime_error);
}

TEST(GateReservation, TheCommandMakesARootOnlyMaintenanceReservation) {
    EXPECT_EQ(gate_reservation_create_args("n1"),
              (std::vector<std::string>{
                  "create", "reservation", "ReservationName=slurm-jail-gate-n1", "Nodes=n1",
                  "Users=root", "StartTime=now", "Duration=infinite", "Flags=MAINT,IGNORE_JOBS"}));
}

TEST(GateReservation, OursOnlyWhenNameNodeUserAndFlagMatch) {
    EXPECT_TRUE(is_gate_reservation(parse_scontrol_reservations(kOursText).at(0), "n1"));
    EXPECT_FALSE(is_gate_reservation(ours(), "n2"));
    auto r = ours();
    r.users = "root,alice";
    EXPECT_FALSE(is_gate_reservation(r, "n1"));
    r = ours();
    r.nodes = "n[1-2]";
    EXPECT_FALSE(is_gate_reservation(r, "n1"));
    r = ours();
    r.flags = "SPEC_NODES";
    EXPECT_FALSE(is_gate_reservation(r, "n1"));
}

TEST(GateReservation, HeldMakesItOnceAndKeepsIt) {
    EXPECT_EQ(plan_hold("n1", kHeld, std::nullopt).step, HoldStep::create);
    const auto again = plan_hold("n1", kHeld, ours()); // the quick check runs every interval
    EXPECT_EQ(again.step, HoldStep::none);
    EXPECT_NE(again.why.find("still held"), std::string::npos);
    EXPECT_EQ(plan_hold("n1", kHeld, ours("INACTIVE")).step, HoldStep::reactivate);
}

TEST(GateReservation, OpenReleasesOnlyOursAndOnlyOnce) {
    const auto p = plan_hold("n1", kOpen, ours());
    EXPECT_EQ(p.step, HoldStep::release);
    EXPECT_EQ(p.reservation, "slurm-jail-gate-n1");
    // ended from the NCCL check's job: the next check removes it rather than wait for Slurm
    EXPECT_EQ(plan_hold("n1", kOpen, ours("INACTIVE")).step, HoldStep::remove_ended);
    EXPECT_EQ(plan_hold("n1", kOpen, std::nullopt).step, HoldStep::none);
    auto theirs = ours();
    theirs.users = "alice";
    EXPECT_EQ(plan_hold("n1", kOpen, theirs).step, HoldStep::none);
}

TEST(GateReservation, RefusesToHoldWhenTheNameIsTakenBySomeoneElse) {
    auto theirs = ours();
    theirs.users = "alice";
    try {
        (void)plan_hold("n1", kHeld, theirs);
        FAIL() << "no error";
    } catch (const GateReservationTaken &e) {
        EXPECT_STREQ(e.what(),
                     "cannot hold n1: reservation slurm-jail-gate-n1 exists and is not the "
                     "gate's (Nodes=n1 Users=alice Flags=MAINT,IGNORE_JOBS,SPEC_NODES, where the "
                     "gate's has Nodes=n1 Users=root and the MAINT flag); nothing was changed. "
                     "Delete or rename it (scontrol delete reservation slurm-jail-gate-n1) so "
                     "that the gate can make its own");
    }
}

TEST(GateReservation, StatusLine) {
    EXPECT_EQ(describe_hold("n1", std::nullopt), "no reservation");
    EXPECT_EQ(describe_hold("n1", ours()),
              "held by reservation slurm-jail-gate-n1 (active, Users=root)");
    EXPECT_EQ(describe_hold("n1", ours("INACTIVE")),
              "held by reservation slurm-jail-gate-n1 (ended, removed once its job ends, "
              "Users=root)");
}

} // namespace
} // namespace sjh
