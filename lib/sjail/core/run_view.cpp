// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/run_view.hpp"

#include "sjail/core/path_rules.hpp"

namespace sjail {

const std::vector<RunDir> &node_run_skeleton() {
    static const std::vector<RunDir> skeleton = {{"/run/lock", 01777}};
    return skeleton;
}

bool in_node_run(RunMode run, const std::string &target) {
    return run == RunMode::Node && target != "/run" && is_same_or_below(target, "/run");
}

} // namespace sjail
