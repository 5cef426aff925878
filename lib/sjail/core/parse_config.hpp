// SPDX-License-Identifier: Apache-2.0
// Reads chroot.so's plugstack.conf arguments into a Config, a row of
// settings.hpp per key, and checks that the mounts they ask for fit together.
// Pure: no system calls.
#pragma once

#include "sjail/core/config.hpp"
#include "sjail/core/status.hpp"

#include <string>
#include <vector>

namespace sjail {

struct ParsedConfig {
    Config config;
    Status status;
};

// Parses "key=value" arguments. Unknown keys, repeated single-valued keys,
// relative or unnormalised paths and colliding mount targets are errors.
ParsedConfig parse_config(const std::vector<std::string> &args);

} // namespace sjail
