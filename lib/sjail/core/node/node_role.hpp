// SPDX-License-Identifier: Apache-2.0
// Whether a node is a compute node: a slurmd of its host runs. Pure.
#pragma once

#include <string_view>

namespace sjail {

// Whether /proc/PID/exe of a process names slurmd ("/usr/sbin/slurmd",
// Debian's "/usr/sbin/slurmd-wlm", also when the binary was replaced:
// "... (deleted)"); never slurmdbd, slurmctld or slurmstepd.
bool is_slurmd_exe(std::string_view link);

} // namespace sjail
