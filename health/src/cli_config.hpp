// The shared config file (/etc/slurm-jail/health.conf) turned into command
// line arguments. Each program reads only its own [section]; "key = value"
// becomes "--key=value" and goes before the real arguments, so the command
// line wins. Unknown keys are then rejected by the option parser like any
// unknown option.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sjh {

inline constexpr const char *kDefaultConfig = "/etc/slurm-jail/health.conf";

// Pure. Throws std::invalid_argument naming the line for anything that is not
// a comment (# or ;), a [section] header or key = value.
std::vector<std::string> config_args(std::string_view text, std::string_view section);

// Thin. Finds --config PATH / --config=PATH in argv (default kDefaultConfig;
// a missing default file is fine, a missing explicit one is an error) and
// returns program args in CLI11's order (reversed, without argv[0]).
std::vector<std::string> args_with_config(int argc, const char *const *argv,
                                          std::string_view section);

} // namespace sjh
