// SPDX-License-Identifier: Apache-2.0
// Parsers for what scontrol and sinfo print, the message for a failed Slurm
// command, and the NCCL driver's node eligibility rule (pure).
#pragma once

#include "reason.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sjh {

// The value of KEY=VALUE in what scontrol printed (KEY at a line's start or
// after a space); empty when there is none.
std::string scontrol_value(std::string_view text, const std::string &key);

// `scontrol show node NAME` (multi-line or -o). Throws std::runtime_error if
// there is no NodeName= or State=.
NodeState parse_scontrol_node(std::string_view text);

// The Gres= value of `scontrol show node` ("" when "(null)" or absent).
std::string parse_scontrol_gres(std::string_view text);

// `sinfo -h -N -o '%N|%T'`: one node per line, repeated per partition.
// Returns unique nodes in first-seen order, state as sinfo prints it ("idle", "drained", "down*").
std::vector<NodeState> parse_sinfo_nodes(std::string_view text);

// The NCCL driver submits only to nodes that can take a job now: idle, mixed,
// allocated or completing, responding (no '*'), not drained/draining/down/failed/
// in maintenance/rebooting/powered down. A node the new-node gate holds
// (`held`) is in its maintenance reservation, which the check's job names:
// "maint" and "reserved" are eligible then too.
bool eligible_for_nccl(std::string_view sinfo_state, bool held = false);

// The message for a failed Slurm command: names the cause and the fix.
std::string explain_slurm_failure(const std::string &tool, const std::string &stderr_text,
                                  int exit_code);

// Quote one word for /bin/sh.
std::string shell_quote(std::string_view word);

} // namespace sjh
