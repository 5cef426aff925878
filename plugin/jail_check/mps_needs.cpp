// SPDX-License-Identifier: Apache-2.0
#include "mps_needs.hpp"

namespace sjail::check {

std::optional<Finding> mps_finding(const MpsFacts &facts) {
    if (!facts.daemon_runs || (!facts.shm_dir.empty() && facts.shm_exists)) {
        return std::nullopt;
    }
    const std::string runs = "a node-wide MPS daemon runs (" + facts.pipe_dir + "/control), ";
    const std::string fix = "run nvidia-cuda-mps-control with a /dev/shm of its own (a tmpfs "
                            "such as /run/nvidia/mps/shm bound over it) and set gpu_mps_shm= "
                            "to that directory";
    if (facts.shm_dir.empty()) {
        return Finding{Severity::Warning,
                       runs + "but gpu_mps_shm= is not set: every job has a /dev/shm of its "
                              "own, where its CUDA programs cannot reach the MPS server's "
                              "shared memory",
                       fix};
    }
    return Finding{Severity::Warning,
                   runs + "but gpu_mps_shm=" + facts.shm_dir +
                       " does not exist on this node: jobs get a /dev/shm of their own, where "
                       "their CUDA programs cannot reach the MPS server's shared memory",
                   fix};
}

std::optional<Finding> mps_shm_space_finding(const MpsShmSpace &space) {
    const std::string fix = "mount a tmpfs of a size for the MPS server and its clients on it, "
                            "e.g. mount -t tmpfs -o size=1g,mode=1777,nosuid,nodev tmpfs " +
                            space.dir;
    const std::string why = ": users' files there count against no job's limit, so one job "
                            "can fill it for every job on the node until its user's last job "
                            "there ends";
    if (!space.tmpfs) {
        return Finding{Severity::Warning, "gpu_mps_shm=" + space.dir + " is not a tmpfs" + why,
                       fix};
    }
    if (space.memory_bytes > 0 && space.size_bytes * 2 >= space.memory_bytes) {
        return Finding{Severity::Warning,
                       "gpu_mps_shm=" + space.dir +
                           " is a tmpfs of half the node's memory or more (the kernel's "
                           "default)" +
                           why,
                       fix};
    }
    return std::nullopt;
}

} // namespace sjail::check
