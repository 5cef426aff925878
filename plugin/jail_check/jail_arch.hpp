// SPDX-License-Identifier: Apache-2.0
// Whether the jail is built for the node's architecture. Pure: the system
// layer (inspect.cpp) reads the first bytes of the jail's /bin/sh.
//
// Every task runs the jail's programs with the jail's libraries on the
// node's CPU: a jail of another architecture (an arm64 jail shared with
// x86-64 nodes, or the other way round) starts nothing ("Exec format
// error"), and the node's driver cannot be loaded into its programs.
#pragma once

#include "finding.hpp"
#include "sjail/core/arch.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace sjail::check {

// A problem when `header` (the first bytes of the jail's /bin/sh, at least
// 20) is an ELF file for another architecture than `node`'s; nothing when
// they match or the file is no ELF program (a script: nothing to tell).
std::optional<Finding> jail_arch_finding(const std::string &jail, std::string_view header,
                                         const Arch &node);

} // namespace sjail::check
