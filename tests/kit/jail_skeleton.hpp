// SPDX-License-Identifier: Apache-2.0
// A jail with nothing in it but what the plugin needs to mount into it: the
// mount points come from the plugin's own mount plan, so a new built-in mount
// needs no change here.
#pragma once

#include "sjail/core/node/mount_plan.hpp"

#include <string>
#include <vector>

namespace kit {

// Below `jail`: for each target of `plan`, an empty file where its source is
// a file (/etc/hosts), else a directory (mode 0755; /tmp 01777 as a jail's
// /tmp is); and /etc/slurm-jail-release holding `release`, which tells a
// process inside the jail that it is there.
std::string make_jail_skeleton(const std::string &jail, const std::vector<sjail::MountOp> &plan,
                               const std::string &release);

} // namespace kit
