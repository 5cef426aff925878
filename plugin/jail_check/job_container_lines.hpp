// SPDX-License-Identifier: Apache-2.0
// slurm.conf's job container lines against the Slurm release slurm-jail-check
// was built for: up to Slurm 25.05 JobContainerType=job_container/slurm_jail,
// from 25.11 NamespaceType=namespace/slurm_jail, alone in either case, and
// PrologFlags=Contain. Pure.
#pragma once

#include "finding.hpp"
#include "slurm_conf.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sjail::check {

// The lines as slurm.conf writes them (empty when absent).
struct JobContainerLines {
    std::string job_container_type; // JobContainerType
    std::string namespace_type;     // NamespaceType (Slurm 25.11 and later)
    std::string prolog_flags;       // PrologFlags
    bool has_includes = false;      // slurm.conf has Include lines, which are not read
};

JobContainerLines job_container_lines(const SlurmConf &conf);

// The Slurm the tools were built for: its release ("24.11") and whether its
// job containers are namespace plugins (25.11 and later).
struct SlurmInterface {
    std::string release;
    bool namespace_plugins = false;
};

// One finding per thing wrong with the lines; none when they are right.
std::vector<Finding> check_job_container_lines(const JobContainerLines &lines,
                                               const SlurmInterface &slurm);

// The slurm.conf line that loads slurm-jail's job container on that Slurm.
std::string job_container_line(const SlurmInterface &slurm);

} // namespace sjail::check
