// SPDX-License-Identifier: Apache-2.0
#include "gate.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

const NodeIdentity kNow = make_identity("boot-b", {"1652", "1651"});
const NodeIdentity kLastBoot = make_identity("boot-a", {"1651", "1652"});

GatePass pass(const NodeIdentity &id) {
    return {id, 1700000000};
}

NodeState node(std::string state, std::string reason = "") {
    return {"n1", std::move(state), std::move(reason)};
}

Action none() {
    return {};
}

TEST(Gate, SerialsAreComparedAsASet) {
    EXPECT_EQ(make_identity("b", {"2", "1"}), make_identity("b", {"1", "2"}));
    EXPECT_NE(make_identity("b", {"1", "2"}), make_identity("b", {"1", "3"}));
}

TEST(Gate, ANewNodeWaitsForBothChecks) {
    const auto v = view_gate(kNow, {});
    EXPECT_TRUE(v.held);
    EXPECT_EQ(v.cause, "new node");
    EXPECT_EQ(v.reason,
              "slurm-jail-health: gate: new node, waiting for the quick check and the NCCL check");
}

TEST(Gate, PassesFromTheLastBootDoNotCount) {
    const auto v = view_gate(kNow, {pass(kLastBoot), pass(kLastBoot)});
    EXPECT_TRUE(v.held);
    EXPECT_EQ(v.cause, "new boot");
    EXPECT_EQ(v.missing, (std::vector<std::string>{"the quick check", "the NCCL check"}));
}

TEST(Gate, TheQuickCheckAloneDoesNotOpenIt) {
    const auto v = view_gate(kNow, {pass(kNow), pass(kLastBoot)});
    EXPECT_TRUE(v.held);
    EXPECT_EQ(v.reason, "slurm-jail-health: gate: new boot, waiting for the NCCL check");
}

TEST(Gate, BothPassesSinceThisBootOpenIt) {
    const auto v = view_gate(kNow, {pass(kNow), pass(kNow)});
    EXPECT_FALSE(v.held);
    EXPECT_TRUE(v.missing.empty());
    EXPECT_TRUE(v.reason.empty());
}

TEST(Gate, AReplacedGpuClosesItAgainWithoutAReboot) {
    const auto replaced = make_identity("boot-b", {"1651", "9999"});
    const auto v = view_gate(replaced, {pass(kNow), pass(kNow)});
    EXPECT_TRUE(v.held);
    EXPECT_EQ(v.cause, "GPUs changed");
}

TEST(Gate, LeavesTheNodeToTheCheckItHoldsByReservation) {
    const auto held = view_gate(kNow, {});
    EXPECT_EQ(apply_gate(node("IDLE"), none(), held).kind, ActionKind::none);
    Action resume;
    resume.kind = ActionKind::resume;
    // the check's own resume goes ahead: the reservation, made first, keeps users out
    EXPECT_EQ(
        apply_gate(node("IDLE+DRAIN", "slurm-jail-health: gpu: GPU 3 lost"), resume, held).kind,
        ActionKind::resume);
}

TEST(Gate, AFailingCheckDrainStands) {
    Action drain;
    drain.kind = ActionKind::drain;
    drain.reason = "slurm-jail-health: gpu: GPU 3 lost";
    const auto a = apply_gate(node("IDLE"), drain, view_gate(kNow, {}));
    EXPECT_EQ(a.kind, ActionKind::drain);
    EXPECT_EQ(a.reason, drain.reason);
}

TEST(Gate, ResumesTheDrainOfAnEarlierReleaseHeldOrOpen) {
    const auto drained_by_gate =
        node("IDLE+DRAIN", "slurm-jail-health: gate: new boot, waiting for the NCCL check");
    const auto open = view_gate(kNow, {pass(kNow), pass(kNow)});
    EXPECT_EQ(apply_gate(drained_by_gate, none(), open).kind, ActionKind::resume);
    const auto held = view_gate(kNow, {pass(kNow), std::nullopt});
    const auto a = apply_gate(drained_by_gate, none(), held);
    EXPECT_EQ(a.kind, ActionKind::resume);
    EXPECT_NE(a.why.find("its reservation holds the node instead"), std::string::npos);
}

TEST(Gate, NeverTouchesAnotherDrain) {
    for (const auto &v : {view_gate(kNow, {}), view_gate(kNow, {pass(kNow), pass(kNow)})}) {
        EXPECT_EQ(apply_gate(node("IDLE+DRAIN", "admin: bad fan"), none(), v).kind,
                  ActionKind::none);
        EXPECT_EQ(apply_gate(node("IDLE+DRAIN", "slurm-jail-health: jail: slow"), none(), v).kind,
                  ActionKind::none);
    }
}

TEST(GatePass, RoundTrips) {
    const auto text = render_gate_pass("nccl", pass(kNow));
    const auto back = parse_gate_pass(text, "nccl");
    EXPECT_EQ(back.identity, kNow);
    EXPECT_DOUBLE_EQ(back.time_s, 1700000000);
}

TEST(GatePass, RefusesAnotherCheckOrABadShape) {
    const auto text = render_gate_pass("gpu", pass(kNow));
    EXPECT_THROW((void)parse_gate_pass(text, "nccl"), std::runtime_error);
    EXPECT_THROW((void)parse_gate_pass("{}", "gpu"), std::runtime_error);
    EXPECT_THROW(
        (void)parse_gate_pass(R"({"check":"gpu","boot_id":"b","gpu_serials":[1],"time":1})", "gpu"),
        std::runtime_error);
}

TEST(GateStatus, SaysWhatPassedWhenAndWhatIsMissing) {
    const GateRecords records{pass(kNow), pass(kLastBoot)};
    const auto text = render_gate_status("n1", kNow, records, view_gate(kNow, records));
    EXPECT_EQ(text, "n1: held (new boot): waiting for the NCCL check\n"
                    "  now: boot boot-b, GPUs [1651 1652]\n"
                    "  the quick check: passed 2023-11-14T22:13:20Z (boot boot-b, GPUs [1651 "
                    "1652])\n"
                    "  the NCCL check: passed 2023-11-14T22:13:20Z (boot boot-a, GPUs [1651 "
                    "1652]): new boot, must pass again\n");
}

} // namespace
} // namespace sjh
