// SPDX-License-Identifier: Apache-2.0
#include "node_action.hpp"

#include "failure_count.hpp"
#include "failure_state_file.hpp"
#include "gate_file.hpp"
#include "gate_reservation.hpp"
#include "trusted_files.hpp"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sjh {
namespace {

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The gate as it will be after this run: its records, with this run's pass.
GateView gate_after(const GateSettings &gate, const std::string &node, const std::string &check,
                    bool passed) {
    auto records = read_gate_records(gate.dir, node);
    if (passed) {
        (check == "gpu" ? records.gpu : records.nccl) = GatePass{gate.identity, unix_now()};
    }
    return view_gate(gate.identity, records);
}

void print_dry_run(std::FILE *out, const std::string &node, const Action &a, const HoldPlan &hold) {
    switch (hold.step) {
    case HoldStep::create:
        fmt::print(out, "dry-run: would run: scontrol {}\n",
                   fmt::join(gate_reservation_create_args(node), " "));
        break;
    case HoldStep::reactivate:
        fmt::print(out,
                   "dry-run: would run: scontrol update reservation ReservationName={} "
                   "Duration=infinite\n",
                   hold.reservation);
        break;
    case HoldStep::release:
    case HoldStep::remove_ended:
        fmt::print(out, "dry-run: would run: scontrol delete reservation {}\n", hold.reservation);
        break;
    case HoldStep::none:
        break;
    }
    switch (a.kind) {
    case ActionKind::drain:
        fmt::print(out,
                   "dry-run: would run: scontrol update nodename={} state=drain reason=\"{}\"\n",
                   node, a.reason);
        break;
    case ActionKind::resume:
        fmt::print(out, "dry-run: would run: scontrol update nodename={} state=resume\n", node);
        break;
    case ActionKind::none:
        break;
    }
    if (!hold.why.empty()) {
        fmt::print(out, "dry-run: {}\n", hold.why);
    }
    if (!a.why.empty()) {
        fmt::print(out, "dry-run: {}\n", a.why);
    }
}

// A held node's reservation is made before its drain or resume, so that it
// is never in users' service between the two; an open node's is removed last.
void hold_before(const SlurmClient &slurm, const std::string &node, const HoldPlan &hold) {
    if (hold.step == HoldStep::create) {
        slurm.create_gate_reservation(node);
    } else if (hold.step == HoldStep::reactivate) {
        slurm.reactivate_reservation(hold.reservation);
    }
}

void release_after(const SlurmClient &slurm, const HoldPlan &hold, std::FILE *out) {
    if (hold.step == HoldStep::release && !slurm.release_reservation(hold.reservation, true)) {
        fmt::print(out, "reservation {} ended now; Slurm removes it once the job in it ends\n",
                   hold.reservation);
    } else if (hold.step == HoldStep::remove_ended &&
               !slurm.release_reservation(hold.reservation, false)) {
        fmt::print(out, "reservation {} still has its job; Slurm removes it once that job ends\n",
                   hold.reservation);
    }
}

} // namespace

Action act_on_outcome(const SlurmClient &slurm, const ActionSettings &s, const std::string &check,
                      bool passed, const std::string &cause, std::FILE *out,
                      const std::optional<GateSettings> &gate) {
    const auto dir = std::filesystem::path(s.state_file).parent_path().string();
    const unsigned previous =
        check_state_dir(dir.empty() ? "." : dir) ? read_failure_count(s.state_file, check) : 0;
    const NodeState node = slurm.show_node(s.node);
    CheckOutcome o;
    o.check = check;
    o.passed = passed;
    o.cause = cause;
    o.consecutive_failures = next_failure_count(previous, passed);
    o.drain_after = s.drain_after;
    Action a = decide(node, o);
    HoldPlan hold;
    if (gate) {
        // Everything is read and decided before anything changes.
        const auto view = gate_after(*gate, s.node, check, passed);
        hold = plan_hold(s.node, view, find_named(slurm.reservations(), s.node));
        a = apply_gate(node, a, view);
    }
    if (s.dry_run) {
        print_dry_run(out, s.node, a, hold);
        return a;
    }
    make_state_dir(dir.empty() ? "." : dir);
    write_failure_count(s.state_file, check, o.consecutive_failures);
    if (gate && passed) {
        write_gate_pass(gate->dir, s.node, check, GatePass{gate->identity, unix_now()});
    }
    hold_before(slurm, s.node, hold);
    if (a.kind == ActionKind::drain) {
        slurm.drain(s.node, a.reason);
    } else if (a.kind == ActionKind::resume) {
        slurm.resume(s.node);
    }
    release_after(slurm, hold, out);
    if (!hold.why.empty()) {
        fmt::print(out, "{}\n", hold.why);
    }
    if (!a.why.empty()) {
        fmt::print(out, "{}\n", a.why);
    }
    return a;
}

} // namespace sjh
