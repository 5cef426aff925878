// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/config.hpp"

#include <algorithm>

namespace sjail {

std::string_view run_mode_name(RunMode mode) {
    return mode == RunMode::Node ? "node" : "jail";
}

bool opt_out_allowed(const Config &config, std::string_view user, unsigned uid) {
    const std::string uid_text = std::to_string(uid);
    return std::any_of(config.allow_opt_out.begin(), config.allow_opt_out.end(),
                       [&](const std::string &entry) {
                           return entry == uid_text || (!user.empty() && entry == user);
                       });
}

} // namespace sjail
