// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/job/root_path_env.hpp"

namespace sjail {

std::string root_path_variable_removed(std::string_view name, std::string_view value) {
    return std::string(name) + "=" + std::string(value) +
           " removed from the step's environment: slurmstepd would make a directory there as "
           "root. Set the place in mpi.conf (PMIxCliTmpDirBase) or slurm.conf (TmpFS) instead";
}

} // namespace sjail
