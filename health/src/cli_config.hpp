// SPDX-License-Identifier: Apache-2.0
// The shared config file (/etc/slurm-jail/health.conf) turned into command
// line arguments (pure). Each program reads only its own [section]; "key =
// value" becomes "--key=value" and goes before the real arguments, so the
// command line wins. Unknown keys are then rejected by the option parser like
// any unknown option. Reading the file: config_file.hpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sjh {

inline constexpr const char *kDefaultConfig = "/etc/slurm-jail/health.conf";

// Throws std::invalid_argument naming the line for anything that is not a
// comment (# or ;), a [section] header or key = value.
std::vector<std::string> config_args(std::string_view text, std::string_view section);

} // namespace sjh
