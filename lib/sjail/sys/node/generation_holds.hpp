// SPDX-License-Identifier: Apache-2.0
// This node's record of the jail generations it holds, on the jail volume
// (core/node/generation_holds.hpp says what it is for).
//
// STATE/held/node names the generation the node's namespace was built on,
// STATE/held/job.JOB the one each job began on; the node's record,
// .slurm-jail/nodes/NODE on the volume (NODE: the host name), lists them
// all. It is written when what the node holds changes: a namespace built on
// a new generation, a job begun on one the record lacks, the last job on an
// old one ended. Before a step may enter a generation the record names it,
// so populate-jail --prune never deletes a generation a step is in.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/status.hpp"

#include <cstdint>
#include <string>

namespace sjail {

// Writes the hold `path` (core/node/generation_holds.hpp) to name
// `generation`, or removes it for 0 (a single-directory jail).
Status save_hold(const std::string &path, std::uint64_t generation);

// Writes this node's record on the volume (jail_volume when set, else jail=)
// when what the node holds now differs from what it recorded last
// (STATE/holds). A child writes it, within build_timeout=, as a new file
// renamed over the old one, below directories that must be root's and closed
// to others, without following a symlink. A node that holds nothing and
// never recorded anything writes nothing (a single-directory jail).
Status record_generation_holds(const Config &config);

} // namespace sjail
