// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/job/root_path_env.hpp"

namespace sjail {

namespace {

// The user's value as one printable line: control characters as '?'.
std::string printable(std::string_view value) {
    std::string shown(value);
    for (char &c : shown) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            c = '?';
        }
    }
    return shown;
}

} // namespace

std::string root_path_variable_removed(std::string_view name, std::string_view value) {
    return std::string(name) + "=" + printable(value) +
           " removed from the step's environment: slurmstepd would make a directory there as "
           "root. Set the place in mpi.conf (PMIxCliTmpDirBase) or slurm.conf (TmpFS) instead";
}

} // namespace sjail
