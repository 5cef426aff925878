// SPDX-License-Identifier: Apache-2.0
// Which generations of a jail volume a node holds. Pure.
//
// A node holds the generation its jail namespace was built on and the one
// each job running on it began on (a job keeps its generation to its end:
// sys/node/jail_generation.hpp). chroot.so records them on the volume, one
// file per node (.slurm-jail/nodes/NODE), so that populate-jail, on any
// node, can tell which nodes still hold a generation and delete only those
// no node holds (populate-jail --holders, --prune).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

namespace sjail {

// The nodes' records, below the volume.
inline constexpr std::string_view kNodesDir = ".slurm-jail/nodes";

// Below the node's state directory: STATE/held holds one file per hold,
// naming its generation: `node` for the node's namespace, `job.JOB` for
// each job on the node.
std::string holds_dir(const std::string &state_dir);
std::string node_hold_path(const std::string &state_dir);
std::string job_hold_path(const std::string &state_dir, std::uint32_t job);

// A node's record: a comment line, then `generation=N` for each generation
// held, smallest first (no line: the node holds none).
std::string format_node_holds(const std::set<std::uint64_t> &generations);

// Whether `name` (the node's host name) may name its record: letters,
// digits, '-', '_' and '.', not starting with '.', at most 64 characters.
bool valid_node_record_name(std::string_view name);

} // namespace sjail
