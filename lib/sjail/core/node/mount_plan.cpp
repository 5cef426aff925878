// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/node/mount_plan.hpp"

#include "sjail/core/path_rules.hpp"

#include <algorithm>

namespace sjail {

std::vector<MountOp> build_mount_plan(const Config &config, const ProcOptions &proc) {
    std::vector<MountOp> plan = {
        {MountKind::FreshProc, "", "/proc", false, true, proc},
        {MountKind::RecursiveBind, "/dev", "/dev", false, false, {}},
        {MountKind::RecursiveBind, "/sys", "/sys", false, true, {}},
    };
    if (config.run == RunMode::Node) {
        plan.push_back({MountKind::FreshRun, "", "/run", false, true, {}});
    }
    plan.insert(plan.end(),
                {
                    {MountKind::Bind, config.tmp_dir, "/tmp", false, true, {}},
                    {MountKind::Bind, config.munge_dir, config.munge_dir, false, true, {}},
                    {MountKind::Bind, config.conf_dir, config.conf_dir, true, true, {}},
                    {MountKind::Bind, config.spool_dir, config.spool_dir, false, true, {}},
                    // Name resolution is node-local (slurmstepd itself resolves the controller).
                    {MountKind::Bind, "/etc/hosts", "/etc/hosts", true, true, {}},
                    {MountKind::Bind, "/etc/resolv.conf", "/etc/resolv.conf", true, true, {}},
                });
    std::vector<MountOp> admin;
    admin.reserve(config.binds.size());
    for (const auto &bind : config.binds) {
        admin.push_back({MountKind::Bind, bind.source, bind.target, bind.read_only, false, {}});
    }
    // Lexicographic order puts "/opt" before "/opt/x": parents are mounted first.
    std::stable_sort(admin.begin(), admin.end(),
                     [](const MountOp &a, const MountOp &b) { return a.target < b.target; });
    plan.insert(plan.end(), admin.begin(), admin.end());
    return plan;
}

} // namespace sjail
