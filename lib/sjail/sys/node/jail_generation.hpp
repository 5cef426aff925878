// SPDX-License-Identifier: Apache-2.0
// The jail a step enters on a volume with generations
// (core/node/jail_generation.hpp): the live generation, found without asking
// the jail's server on the usual path.
//
// The live file's text is kept in STATE/jail-live, and a step takes it from
// there while that record is younger than recheck= seconds and the node
// kernel's caches show no other file at .slurm-jail/live. Otherwise a child
// reads the file again, within build_timeout=, so a dead server hangs no
// step. So a switch made on this node is seen at once, one made on another
// node within recheck= seconds, and the server is asked at most once every
// recheck= seconds for it.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/status.hpp"

#include <string>

namespace sjail {

// `config` as a step uses it now, with jail_volume set to the volume that
// jail= names. On a volume with generations: jail= is the live generation's
// directory below the volume, and each data path of the volume is bound
// onto the same path of the generation, after the admin's bind= lines. On a
// single-directory jail: jail= as it is. A config resolved already (its
// jail_volume set) is taken as it is. A live file that is not a regular file
// owned by root and closed to others, or not as populate-jail writes it,
// fails closed with its path and the fix.
// `how`: Recorded, as steps read it (above); Fresh reads the live file now
// and records nothing (slurm-jail-check, which changes nothing).
enum class LiveRead { Recorded, Fresh };
Status resolve_live_jail(const Config &config, Config &out, LiveRead how = LiveRead::Recorded);

// Where the live file's identity and text are kept between steps.
std::string live_memo_path(const std::string &state_dir);

} // namespace sjail
