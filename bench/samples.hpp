// SPDX-License-Identifier: Apache-2.0
// The timed samples of the benchmark node (bench_env.hpp's Op), each taken
// in the node process or in a fresh child of it.
#pragma once

#include "bench_env.hpp"
#include "bench_node.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

// One sample of `op` for the configuration `jc`; its values are appended
// to `values`. Returns "" or what went wrong.
std::string take_sample(Op op, const JailConfig &jc, std::vector<std::int64_t> &values);

// Around a batch of JobEntry samples: the job's namespaces are made
// (start = true), as by its first step, or deleted.
std::string job_entry_batch(const JailConfig &jc, bool start);

} // namespace bench
