// SPDX-License-Identifier: Apache-2.0
#include "gate_reservation.hpp"

#include "slurm_text.hpp"
#include "text.hpp"

#include <fmt/format.h>

namespace sjh {
namespace {

bool has_flag(std::string_view flags, std::string_view flag) {
    for (const auto f : split(flags, ',')) {
        if (trim(f) == flag) {
            return true;
        }
    }
    return false;
}

std::string why_not_ours(const Reservation &r, std::string_view node) {
    return fmt::format("Nodes={} Users={} Flags={}, where the gate's has Nodes={} Users={} and "
                       "the MAINT flag",
                       r.nodes, r.users, r.flags, node, kGateReservationUser);
}

} // namespace

std::vector<Reservation> parse_scontrol_reservations(std::string_view text) {
    std::vector<Reservation> out;
    for (const auto raw : lines(text)) {
        const auto line = std::string(trim(raw));
        if (line.empty() || line.starts_with("No reservations")) {
            continue;
        }
        Reservation r;
        r.name = scontrol_value(line, "ReservationName");
        if (r.name.empty()) {
            throw std::runtime_error(fmt::format(
                "scontrol printed a reservation without ReservationName= (unexpected output: "
                "'{}')",
                line.substr(0, 200)));
        }
        r.nodes = scontrol_value(line, "Nodes");
        r.users = scontrol_value(line, "Users");
        r.flags = scontrol_value(line, "Flags");
        r.state = scontrol_value(line, "State");
        out.push_back(std::move(r));
    }
    return out;
}

std::string gate_reservation_name(std::string_view node) {
    return fmt::format("{}{}", kGateReservationPrefix, node);
}

std::vector<std::string> gate_reservation_create_args(std::string_view node) {
    return {"create",
            "reservation",
            "ReservationName=" + gate_reservation_name(node),
            fmt::format("Nodes={}", node),
            fmt::format("Users={}", kGateReservationUser),
            "StartTime=now",
            "Duration=infinite",
            fmt::format("Flags={}", kGateReservationFlags)};
}

bool is_gate_reservation(const Reservation &r, std::string_view node) {
    return r.name == gate_reservation_name(node) && r.nodes == node &&
           r.users == kGateReservationUser && has_flag(r.flags, "MAINT");
}

std::optional<Reservation> find_named(const std::vector<Reservation> &all, std::string_view node) {
    const auto name = gate_reservation_name(node);
    for (const auto &r : all) {
        if (r.name == name) {
            return r;
        }
    }
    return std::nullopt;
}

HoldPlan plan_hold(std::string_view node, const GateView &gate,
                   const std::optional<Reservation> &named) {
    HoldPlan p;
    p.reservation = gate_reservation_name(node);
    const bool ours = named && is_gate_reservation(*named, node);
    if (named && !ours) {
        if (gate.held) {
            throw GateReservationTaken(fmt::format(
                "cannot hold {}: reservation {} exists and is not the gate's ({}); nothing was "
                "changed. Delete or rename it (scontrol delete reservation {}) so that the gate "
                "can make its own",
                node, p.reservation, why_not_ours(*named, node), p.reservation));
        }
        p.why =
            fmt::format("{}: reservation {} is not the gate's; left as it is", node, p.reservation);
        return p;
    }
    if (gate.held) {
        if (!named) {
            p.step = HoldStep::create;
            p.why = fmt::format("{}: held by the new-node gate ({}) with reservation {}: jobs "
                                "that do not name it do not start there",
                                node, gate.reason, p.reservation);
        } else if (!named->active()) {
            p.step = HoldStep::reactivate;
            p.why = fmt::format("{}: held again by the new-node gate ({}): reservation {} made "
                                "endless again",
                                node, gate.reason, p.reservation);
        } else {
            p.why = fmt::format("{}: still held by the new-node gate ({}) with reservation {}",
                                node, gate.reason, p.reservation);
        }
        return p;
    }
    if (ours && named->active()) {
        p.step = HoldStep::release;
        p.why = fmt::format("{}: the quick check and the NCCL check passed since this boot; "
                            "releasing reservation {}",
                            node, p.reservation);
    } else if (ours) {
        // Ended by the NCCL check from its job: Slurm would purge it only on
        // its own schedule, and users' jobs wait for the node until then.
        p.step = HoldStep::remove_ended;
        p.why = fmt::format("{}: removing reservation {}, ended when the gate opened", node,
                            p.reservation);
    }
    return p;
}

std::string describe_hold(std::string_view node, const std::optional<Reservation> &named) {
    if (!named) {
        return "no reservation";
    }
    if (!is_gate_reservation(*named, node)) {
        return fmt::format("reservation {} is not the gate's ({})", named->name,
                           why_not_ours(*named, node));
    }
    return fmt::format("held by reservation {} ({}, Users={})", named->name,
                       named->active() ? "active" : "ended, removed once its job ends",
                       named->users);
}

} // namespace sjh
