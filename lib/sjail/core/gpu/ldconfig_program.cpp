// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/gpu/ldconfig_program.hpp"

namespace sjail {

std::vector<std::string> ldconfig_candidates(const std::string &configured) {
    return {configured, configured + ".real"};
}

ProgramKind program_kind(std::string_view first_bytes) {
    if (first_bytes.substr(0, 4) == "\x7f"
                                    "ELF") {
        return ProgramKind::Elf;
    }
    if (first_bytes.substr(0, 2) == "#!") {
        return ProgramKind::Script;
    }
    return ProgramKind::Other;
}

std::string no_ldconfig_program_message(const std::string &configured, const std::string &script) {
    const std::string real = configured + ".real";
    if (!script.empty()) {
        return "the node's ldconfig " + script +
               " is a script (Ubuntu's wrapper), and root never runs a script found on the node; "
               "the ELF program it wraps, " +
               real +
               ", is missing or is not an ELF program: install the node's C library tools again "
               "(Ubuntu: apt-get install --reinstall libc-bin)";
    }
    return "the node's ldconfig " + configured + " is not an ELF program, and neither is " + real +
           ": install the node's C library tools again (apt-get install --reinstall libc-bin, or "
           "dnf reinstall glibc)";
}

} // namespace sjail
