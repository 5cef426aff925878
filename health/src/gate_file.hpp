// SPDX-License-Identifier: Apache-2.0
// The new-node gate's files (thin system layer): the boot id, and one record
// per check and node, gate.<node>.<check>, in the gate's directory, each
// written atomically by its own check (no two writers share a file).
#pragma once

#include "gate.hpp"

#include <string>
#include <string_view>

namespace sjh {

inline constexpr const char *kDefaultBootIdFile = "/proc/sys/kernel/random/boot_id";

// The boot id (one line). Throws naming the file and --boot-id-file when it
// cannot be read or is empty.
std::string read_boot_id(const std::string &path);

// DIR/gate.NODE.CHECK
std::string gate_record_path(const std::string &dir, std::string_view node, std::string_view check);

// Both checks' records for the node; a missing file is no pass, a corrupt one
// an error naming the file and the fix.
GateRecords read_gate_records(const std::string &dir, std::string_view node);

// Records the check's pass (the directory must exist and be trusted).
void write_gate_pass(const std::string &dir, std::string_view node, std::string_view check,
                     const GatePass &pass);

} // namespace sjh
