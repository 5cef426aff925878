// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/node/node_role.hpp"

namespace sjail {

bool is_slurmd_exe(std::string_view link) {
    constexpr std::string_view kDeleted = " (deleted)";
    if (link.ends_with(kDeleted)) {
        link.remove_suffix(kDeleted.size());
    }
    const auto slash = link.rfind('/');
    if (slash == std::string_view::npos) {
        return false;
    }
    // Debian installs it as slurmd-wlm (slurmd is an alternatives link).
    const auto name = link.substr(slash + 1);
    return name == "slurmd" || name == "slurmd-wlm";
}

} // namespace sjail
