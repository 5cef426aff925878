// SPDX-License-Identifier: Apache-2.0
// Thin layer over scontrol, sinfo and sbatch. Every failure becomes a
// SlurmError whose message names the cause and the fix. The tools are found
// as trusted programs (never through $PATH) and run with a clean environment
// that keeps only SLURM_CONF (child_env.hpp); sbatch passes that environment
// on to the job.
#pragma once

#include "gate_reservation.hpp"
#include "reason.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace sjh {

struct SlurmError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct SlurmTools {
    std::string scontrol = "scontrol";
    std::string sinfo = "sinfo";
    std::string sbatch = "sbatch";
    int timeout_s = 20;
};

// The trusted path of a Slurm tool (a path, or a name looked up in kSafePath).
// Throws SlurmError when it does not exist and UntrustedPath when another user
// could have changed it.
std::string find_slurm_tool(const std::string &tool);

class SlurmClient {
  public:
    explicit SlurmClient(SlurmTools tools) : tools_(std::move(tools)) {}

    NodeState show_node(const std::string &node) const;
    std::string node_gres(const std::string &node) const;
    std::vector<NodeState> list_nodes(const std::string &partition) const;
    // `scontrol show hostnames LIST`: "node[1-3]" -> node1, node2, node3.
    std::vector<std::string> hostnames(const std::string &hostlist) const;
    void drain(const std::string &node, const std::string &reason) const;
    void resume(const std::string &node) const;
    // `scontrol show reservation -o`: every reservation.
    std::vector<Reservation> reservations() const;
    // The new-node gate's reservation for the node (gate_reservation.hpp).
    void create_gate_reservation(const std::string &node) const;
    // Makes an ended reservation endless again (Duration=infinite).
    void reactivate_reservation(const std::string &name) const;
    // Deletes it; while a job still runs in it (Slurm refuses to delete it
    // then), ends it now instead with `end_if_in_use`, else leaves it: Slurm
    // removes an ended reservation after its job ends. Returns false when it
    // was not deleted.
    bool release_reservation(const std::string &name, bool end_if_in_use) const;
    // Returns sbatch's output ("Submitted batch job N").
    std::string submit(const std::vector<std::string> &sbatch_args) const;

  private:
    std::string run(const std::string &tool, const std::vector<std::string> &args) const;
    SlurmTools tools_;
};

} // namespace sjh
