// SPDX-License-Identifier: Apache-2.0
// What slurm-jail-check's two halves share while they look: the subject,
// the findings so far and the jail's root (inspect.cpp looks at the node and
// the jail, inspect_jobs.cpp at what jobs need there).
#pragma once

#include "finding.hpp"
#include "inspect.hpp"
#include "sjail/core/config.hpp"
#include "sjail/sys/fd.hpp"
#include "sjail/sys/trusted_path.hpp"

#include <string>
#include <vector>

namespace sjail::check {

struct Run {
    const Subject &subject;
    const Config &config;
    std::vector<Finding> findings;
    Fd jail;                      // O_PATH of the jail root; empty when it cannot be opened at all
    bool node_gpu_driver = false; // the plugin binds this node's NVIDIA driver into jobs

    void problem(std::string cause, std::string fix) {
        findings.push_back({Severity::Problem, std::move(cause), std::move(fix)});
    }
    void warning(std::string cause, std::string fix) {
        findings.push_back({Severity::Warning, std::move(cause), std::move(fix)});
    }
};

// A root-owned file of the jail, opened with the plugin's rule (no user's
// symlink followed, trusted links resolved inside the jail).
inline Status open_in_jail(Run &run, const std::string &path, TrustedOpen &out,
                           bool for_reading = false) {
    return open_trusted(run.jail.get(), "jail " + run.config.jail, path, TrustedKind::File, out,
                        for_reading);
}

// Slurm's own OCI support: oci.conf beside slurm.conf (inspect_jobs.cpp).
void check_slurm_oci(Run &run);

// What srun, sbatch and containers in jobs need on the node and in the jail,
// pyxis's lines, and su's PAM stack on a compute node (inspect_jobs.cpp).
void check_for_jobs(Run &run);

} // namespace sjail::check
