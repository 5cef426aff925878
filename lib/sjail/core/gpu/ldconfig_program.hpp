// SPDX-License-Identifier: Apache-2.0
// Which file of the node runs as ldconfig. Debian's and the RHEL family's
// ldconfig is the ELF program itself; Ubuntu's /sbin/ldconfig is a shell
// script that runs /sbin/ldconfig.real. Root runs only an ELF program found
// on the node, never a script (its interpreter, its PATH and what it sources
// are more files that would have to be trusted). Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sjail {

// The files to try, in order: the configured one, then its ".real" beside it.
std::vector<std::string> ldconfig_candidates(const std::string &configured);

enum class ProgramKind { Elf, Script, Other };

// What a file is, from its first bytes ("\x7f" "ELF", or "#!").
ProgramKind program_kind(std::string_view first_bytes);

// The failure message when no candidate is an ELF program; `script` is the
// first candidate found to be a script ("" when none was).
std::string no_ldconfig_program_message(const std::string &configured, const std::string &script);

} // namespace sjail
