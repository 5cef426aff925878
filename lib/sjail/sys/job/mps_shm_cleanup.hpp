// SPDX-License-Identifier: Apache-2.0
// What users leave in the MPS daemon's /dev/shm (gpu_mps_shm=, shared by
// the node's jobs: gpu/mps_shm.hpp) goes with their last job on the node.
#pragma once

#include "sjail/core/config.hpp"

namespace sjail {

// Empties gpu_mps_shm=DIR of what users left there: every entry owned by a
// uid that is neither root's nor the user of a job still on the node
// (job_user.hpp) is removed, without following links. Called when a job
// ends on the node: the files of its user go with their last job there;
// the daemon's (root's) stay, and so do those of a running job's user.
// Nothing is removed while a job's user is not known.
void clean_mps_shm(const Config &config);

} // namespace sjail
