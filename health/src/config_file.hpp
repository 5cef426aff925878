// SPDX-License-Identifier: Apache-2.0
// Reading the shared config file for a program (thin system layer). The file
// steers what a check runs as root, so it must be one that only root (or the
// user running the program) can change (trusted_files.hpp); /dev/null reads as
// an empty config.
#pragma once

#include "cli_config.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sjh {

// Finds --config PATH / --config=PATH in argv (default kDefaultConfig; a
// missing default file is fine, a missing explicit one is an error) and
// returns program args in CLI11's order (reversed, without argv[0]).
std::vector<std::string> args_with_config(int argc, const char *const *argv,
                                          std::string_view section);

// The [section] of the config file at `path` as "--key=value" arguments; none
// when the file does not exist and `required` is false.
std::vector<std::string> config_section_args(const std::string &path, std::string_view section,
                                             bool required);

} // namespace sjh
