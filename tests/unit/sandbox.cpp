// SPDX-License-Identifier: Apache-2.0
#include "sandbox.hpp"

#include "kit/jail_skeleton.hpp"
#include "sjail/core/node/mount_plan.hpp"
#include "sjail/core/parse_config.hpp"

namespace sandbox {

std::string make_layout(const std::string &base, sjail::Config &config) {
    const std::string jail = base + "/jail";
    const std::string node = base + "/node";
    for (const auto &dir : {"/munge", "/conf", "/spool", "/data"}) {
        if (auto e = kit::mkdir_p(node + dir, 0755); !e.empty()) {
            return e;
        }
    }
    std::string e = kit::write_file(node + "/data/hello", "hi");
    e += kit::write_file(node + "/conf/slurm.conf", "ClusterName=test\n");
    e += kit::write_file(base + "/host-only", "host");
    if (!e.empty()) {
        return e;
    }
    auto parsed = sjail::parse_config({"jail=" + jail, "munge=" + node + "/munge",
                                       "conf_dir=" + node + "/conf", "spool=" + node + "/spool",
                                       "tmp=" + node + "/tmp", "state=" + base + "/state",
                                       "bind=" + node + "/data:/opt/data:ro",
                                       // the host's own NVIDIA driver (on a GPU machine)
                                       // stays out of these jails; the GPU tests ask for theirs
                                       "gpu=off"});
    config = parsed.config;
    if (!parsed.status.ok()) {
        return parsed.status.message();
    }
    if (auto e2 = kit::make_jail_skeleton(jail, sjail::build_mount_plan(config), "JAIL");
        !e2.empty()) {
        return e2;
    }
    // Where tests bind more.
    return kit::mkdir_p(jail + "/home", 0755);
}

std::string make_node(sjail::Config &config) {
    if (auto e = kit::private_node_namespace("sandbox", kit::HostMounts::Slave); !e.empty()) {
        return e;
    }
    return make_layout("/mnt", config);
}

} // namespace sandbox
