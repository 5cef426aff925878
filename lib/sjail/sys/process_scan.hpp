// SPDX-License-Identifier: Apache-2.0
// Every process of the node, as /proc lists them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace sjail {

// Calls `visit(pid, dir)` for each process in /proc ("/proc/PID" as `dir`)
// until it returns false. Processes may exit meanwhile: `visit` must expect
// their files to be gone.
void for_each_process(const std::function<bool(std::int64_t pid, const std::string &dir)> &visit);

} // namespace sjail
