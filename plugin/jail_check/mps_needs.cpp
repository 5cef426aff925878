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

} // namespace sjail::check
