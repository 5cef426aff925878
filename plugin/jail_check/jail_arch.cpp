// SPDX-License-Identifier: Apache-2.0
#include "jail_arch.hpp"

namespace sjail::check {

std::optional<Finding> jail_arch_finding(const std::string &jail, std::string_view header,
                                         const Arch &node) {
    std::string error;
    const std::string arch = elf_arch_name(header, error);
    if (!error.empty() || arch == node.name) {
        return std::nullopt;
    }
    const std::string node_arch(node.name);
    return Finding{Severity::Problem,
                   "the jail " + jail + " is " + arch + " (its /bin/sh), but this node is " +
                       node_arch + ": no program in it can run here",
                   "give " + node_arch + " nodes a jail built for " + node_arch +
                       " (mmdebstrap --arch=" + std::string(node.dpkg) +
                       "), or run this jail on nodes of its own architecture only"};
}

} // namespace sjail::check
