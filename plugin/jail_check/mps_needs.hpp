// SPDX-License-Identifier: Apache-2.0
// What a node-wide MPS daemon's clients in jobs need. Pure: the system layer
// (inspect.cpp) gathers the facts.
//
// MPS clients reach the daemon through its pipe directory (gpu_mps_dir=,
// bound into every job) and share memory with the server through files in
// /dev/shm, found by name. A job's /dev/shm is its own unless gpu_mps_shm=
// names the daemon's, so a daemon that runs without it serves no job: a
// warning (jobs run; their CUDA programs fail to reach MPS).
#pragma once

#include "finding.hpp"

#include <optional>
#include <string>

namespace sjail::check {

struct MpsFacts {
    std::string pipe_dir;     // gpu_mps_dir=
    bool daemon_runs = false; // the pipe directory holds the daemon's `control`
    std::string shm_dir;      // gpu_mps_shm= (empty: not set)
    bool shm_exists = false;  // gpu_mps_shm='s directory exists on the node
};

// A warning when the daemon runs and jobs would not get its /dev/shm;
// nothing otherwise (no daemon, or jobs get it).
std::optional<Finding> mps_finding(const MpsFacts &facts);

// gpu_mps_shm='s directory, as the node has it: no job's quota applies
// there, so its own size limit is the bound on what jobs put there.
struct MpsShmSpace {
    std::string dir;
    bool tmpfs = false;
    unsigned long long size_bytes = 0;   // the filesystem's size
    unsigned long long memory_bytes = 0; // the node's memory (MemTotal)
};

// A warning when the directory is not a tmpfs, or is one of the kernel's
// default size (half the memory or more).
std::optional<Finding> mps_shm_space_finding(const MpsShmSpace &space);

} // namespace sjail::check
