// SPDX-License-Identifier: Apache-2.0
// Running `dcgmi diag -r LEVEL -j` under a deadline (thin system layer). dcgmi
// is found like every program the checks run (trusted_files.hpp: a bare name
// only in the fixed safe PATH, every path component root-owned and not
// writable by others) and gets the clean environment of child_env.hpp.
#pragma once

#include "dcgm_verdict.hpp"

#include <chrono>
#include <string>

namespace sjh {

// A dcgmi that is missing is reported in the result (found = false); one that
// another user could have changed throws UntrustedPath. Killed, with its
// process group, at `timeout`.
DcgmRun run_dcgmi(const std::string &dcgmi, unsigned level, std::chrono::milliseconds timeout);

} // namespace sjh
