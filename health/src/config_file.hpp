// Reading the shared config file for a program (thin system layer).
#pragma once

#include "cli_config.hpp"

#include <string_view>
#include <vector>

namespace sjh {

// Finds --config PATH / --config=PATH in argv (default kDefaultConfig; a
// missing default file is fine, a missing explicit one is an error) and
// returns program args in CLI11's order (reversed, without argv[0]).
std::vector<std::string> args_with_config(int argc, const char *const *argv,
                                          std::string_view section);

} // namespace sjh
