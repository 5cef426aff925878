// SPDX-License-Identifier: Apache-2.0
// The variables of a step's environment that slurmstepd, as root, would take
// as a path to create, chown or remove. The user sets the step's
// environment, so chroot.so removes them before anything reads them. Pure.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace sjail {

// mpi/pmix (Slurm 22.05 to 26.05) makes VALUE/spmix_appdir_UID_JOB.STEP
// with mkdir and chown, as root, in the view of the step, and removes it
// at the end: a user could have root make a directory of theirs in the
// jail's /etc, another user's home (through a planted link above the last
// name) or the node's /run. Without it, mpi/pmix takes mpi.conf's
// PMIxCliTmpDirBase, then slurm.conf's TmpFS (the job's own /tmp).
// SLURM_PMIX_SRV_TMPDIR is defined by mpi/pmix but read by none of these
// releases: removed in case one does.
inline constexpr std::array<std::string_view, 2> kRootPathVariables = {"SLURM_PMIX_TMPDIR",
                                                                       "SLURM_PMIX_SRV_TMPDIR"};

// The log line for a variable removed from the step's environment (the
// user's value on one line: control characters shown as '?').
std::string root_path_variable_removed(std::string_view name, std::string_view value);

} // namespace sjail
