// SPDX-License-Identifier: Apache-2.0
#include "slurm_client.hpp"

#include "child_env.hpp"
#include "slurm_text.hpp"
#include "subprocess.hpp"
#include "text.hpp"
#include "trusted_files.hpp"

#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sjh {

std::string find_slurm_tool(const std::string &tool) {
    const auto found = find_trusted_program(tool);
    if (found.error != 0) {
        throw SlurmError(fmt::format("cannot run '{}': {}; install slurm-client or pass its path "
                                     "(--scontrol/--sinfo/--sbatch)",
                                     tool, std::strerror(found.error)));
    }
    return found.path;
}

std::string SlurmClient::run(const std::string &tool, const std::vector<std::string> &args) const {
    // Run as root: never from $PATH, never with the caller's loader variables.
    std::vector<std::string> argv{find_slurm_tool(tool)};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandOptions opts;
    opts.timeout = std::chrono::seconds(tools_.timeout_s);
    opts.environment = child_environment(current_environment(), {"SLURM_CONF"}, {});
    const auto r = run_command(argv, opts);
    if (!r.started) {
        throw SlurmError(fmt::format("cannot run '{}': {}; install slurm-client or pass its path "
                                     "(--scontrol/--sinfo/--sbatch)",
                                     tool, r.exec_error));
    }
    if (r.timed_out) {
        throw SlurmError(fmt::format("'{} {}' did not answer within {} s; is slurmctld "
                                     "overloaded or unreachable? nothing was changed",
                                     tool, fmt::join(args, " "), tools_.timeout_s));
    }
    if (r.exit_code != 0 || r.signal != 0) {
        throw SlurmError(explain_slurm_failure(tool, r.err, r.exit_code));
    }
    return r.out;
}

NodeState SlurmClient::show_node(const std::string &node) const {
    const auto out = run(tools_.scontrol, {"show", "node", node});
    try {
        return parse_scontrol_node(out);
    } catch (const std::exception &e) {
        throw SlurmError(fmt::format("cannot read the state of node '{}': {}", node, e.what()));
    }
}

std::string SlurmClient::node_gres(const std::string &node) const {
    return parse_scontrol_gres(run(tools_.scontrol, {"show", "node", node}));
}

std::vector<NodeState> SlurmClient::list_nodes(const std::string &partition) const {
    std::vector<std::string> args{"-h", "-N", "-o", "%N|%T"};
    if (!partition.empty()) {
        args.insert(args.end(), {"-p", partition});
    }
    return parse_sinfo_nodes(run(tools_.sinfo, args));
}

std::vector<std::string> SlurmClient::hostnames(const std::string &hostlist) const {
    std::vector<std::string> names;
    const auto out = run(tools_.scontrol, {"show", "hostnames", hostlist});
    for (const auto line : lines(out)) {
        if (const auto name = trim(line); !name.empty()) {
            names.emplace_back(name);
        }
    }
    return names;
}

void SlurmClient::drain(const std::string &node, const std::string &reason) const {
    run(tools_.scontrol, {"update", "nodename=" + node, "state=drain", "reason=" + reason});
}

void SlurmClient::resume(const std::string &node) const {
    run(tools_.scontrol, {"update", "nodename=" + node, "state=resume"});
}

std::vector<Reservation> SlurmClient::reservations() const {
    const auto out = run(tools_.scontrol, {"show", "reservation", "-o"});
    try {
        return parse_scontrol_reservations(out);
    } catch (const std::exception &e) {
        throw SlurmError(fmt::format("cannot read Slurm's reservations: {}", e.what()));
    }
}

void SlurmClient::create_gate_reservation(const std::string &node) const {
    run(tools_.scontrol, gate_reservation_create_args(node));
}

void SlurmClient::reactivate_reservation(const std::string &name) const {
    run(tools_.scontrol, {"update", "reservation", "ReservationName=" + name, "Duration=infinite"});
}

bool SlurmClient::release_reservation(const std::string &name, bool end_if_in_use) const {
    try {
        run(tools_.scontrol, {"delete", "reservation", name});
        return true;
    } catch (const SlurmError &e) {
        // "Requested reservation is in use": the NCCL check's own job runs in it.
        if (std::string_view(e.what()).find("in use") == std::string_view::npos) {
            throw;
        }
    }
    if (end_if_in_use) {
        run(tools_.scontrol, {"update", "reservation", "ReservationName=" + name, "EndTime=now"});
    }
    return false;
}

std::string SlurmClient::submit(const std::vector<std::string> &sbatch_args) const {
    return run(tools_.sbatch, sbatch_args);
}

} // namespace sjh
