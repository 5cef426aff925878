// SPDX-License-Identifier: Apache-2.0
// How the new-node gate holds a node (pure): with a reservation of its own,
// slurm-jail-gate-<node>, that only root may use. Users' jobs, which do not
// name it, do not start on the node; the NCCL check's job, which names it
// (slurm-jail-nccl-submit), does. The gate only ever changes the reservation
// it made: the name, the one node, Users=root and the MAINT flag all match.
#pragma once

#include "gate.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sjh {

inline constexpr std::string_view kGateReservationPrefix = "slurm-jail-gate-";
// The only user who may run jobs in it: the checks' jobs run as root.
inline constexpr std::string_view kGateReservationUser = "root";
// MAINT: allowed over other reservations, accounted as maintenance;
// IGNORE_JOBS: made even while jobs run on the node. Both exist from Slurm
// 22.05 to 26.05.
inline constexpr std::string_view kGateReservationFlags = "MAINT,IGNORE_JOBS";

// One line of `scontrol show reservation -o`.
struct Reservation {
    std::string name;
    std::string nodes; // hostlist, as Slurm prints it
    std::string users;
    std::string flags; // "MAINT,IGNORE_JOBS,SPEC_NODES"
    std::string state; // "ACTIVE" or "INACTIVE"
    bool active() const { return state == "ACTIVE"; }
};

// `scontrol show reservation -o`; "No reservations in the system" is none.
// Throws std::runtime_error on a line without ReservationName=.
std::vector<Reservation> parse_scontrol_reservations(std::string_view text);

// slurm-jail-gate-<node>
std::string gate_reservation_name(std::string_view node);

// The scontrol arguments that make the node's reservation.
std::vector<std::string> gate_reservation_create_args(std::string_view node);

// The gate's own reservation for the node: the name, exactly this node,
// Users=root, the MAINT flag.
bool is_gate_reservation(const Reservation &r, std::string_view node);

// The reservation named for the node, if any (ours or not).
std::optional<Reservation> find_named(const std::vector<Reservation> &all, std::string_view node);

// Thrown when the gate must hold a node and a reservation of someone else
// already has its name: the message names it and the fix.
struct GateReservationTaken : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class HoldStep {
    none,
    create,       // hold: make the reservation
    reactivate,   // hold: our reservation was ended and still lingers; make it endless again
    release,      // open: delete ours (or end it now while the NCCL check's job runs in it)
    remove_ended, // open: delete ours, ended from that job (left while the job still runs)
};

struct HoldPlan {
    HoldStep step = HoldStep::none;
    std::string reservation; // its name
    std::string why;         // one line for the log
};

// What to do with the node's reservation: held, make sure ours is there and
// active; open, remove ours. A reservation of someone else under our name is
// never touched: holding then throws GateReservationTaken (before anything is
// changed), opening leaves it.
HoldPlan plan_hold(std::string_view node, const GateView &gate,
                   const std::optional<Reservation> &named);

// The reservation's line for --gate-status: "held by reservation NAME
// (active)", "no reservation", or what is wrong with the one named ours.
std::string describe_hold(std::string_view node, const std::optional<Reservation> &named);

} // namespace sjh
