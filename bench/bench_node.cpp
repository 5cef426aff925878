// SPDX-License-Identifier: Apache-2.0
#include "bench_node.hpp"

#include "kit/files.hpp"
#include "kit/jail_skeleton.hpp"
#include "kit/node.hpp"
#include "sjail/core/parse_config.hpp"
#include "sjail/sys/node/node_namespace.hpp"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bench {
namespace {

// Everything lives below this directory, on a tmpfs mounted in the node's
// private namespace only; the host's own /mnt is never touched.
constexpr const char *kBase = "/mnt";
constexpr const char *kRelease = "JAIL-BENCH\n";

const std::string base = kBase;
const std::string jail_dir = base + "/jail";
const std::string node_dir = base + "/node";
const std::string host_mounts_dir = base + "/hostmounts";

std::string make_config(int binds, JailConfig &out) {
    std::vector<std::string> args = {"jail=" + jail_dir,
                                     "munge=" + node_dir + "/munge",
                                     "conf_dir=" + node_dir + "/conf",
                                     "spool=" + node_dir + "/spool",
                                     "tmp=" + node_dir + "/tmp",
                                     "state=" + base + "/state-b" + std::to_string(binds)};
    for (int i = 0; i < binds; ++i) {
        const std::string name = "/b" + std::to_string(i);
        // Every other bind read-only, as admins mix both.
        args.push_back("bind=" + node_dir + "/binds" + name + ":/opt" + name +
                       (i % 2 == 1 ? ":ro" : ""));
    }
    auto parsed = sjail::parse_config(args);
    if (!parsed.status.ok()) {
        return "config: " + parsed.status.message();
    }
    out.binds = binds;
    out.args = args;
    out.config = parsed.config;
    out.plan = sjail::build_mount_plan(out.config);
    return "";
}

// The node's directories and a jail skeleton with the mount points of the
// widest config's plan.
std::string make_layout(int max_binds) {
    for (const std::string dir : {"/munge", "/conf", "/spool", "/binds"}) {
        if (auto e = kit::mkdir_p(node_dir + dir, 0755); !e.empty()) {
            return e;
        }
    }
    for (int i = 0; i < max_binds; ++i) {
        const std::string name = node_dir + "/binds/b" + std::to_string(i);
        if (auto e = kit::mkdir_p(name, 0755); !e.empty()) {
            return e;
        }
    }
    if (auto e = kit::write_file(node_dir + "/conf/slurm.conf", "ClusterName=bench\n");
        !e.empty()) {
        return e;
    }
    JailConfig widest;
    if (auto e = make_config(max_binds, widest); !e.empty()) {
        return e;
    }
    return kit::make_jail_skeleton(jail_dir, widest.plan, kRelease);
}

// Small tmpfs mounts, as autofs/Lustre/overlay mounts would be on a real node.
std::string add_host_mounts(int count) {
    if (auto e = kit::mkdir_p(host_mounts_dir, 0755); !e.empty()) {
        return e;
    }
    for (int i = 0; i < count; ++i) {
        const std::string dir = host_mounts_dir + "/m" + std::to_string(i);
        if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
            return kit::errno_text("mkdir " + dir);
        }
        if (::mount("sjail-bench-host", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                    "size=4k,nr_inodes=16,mode=0755") != 0) {
            return kit::errno_text("mount tmpfs on " + dir);
        }
    }
    return "";
}

} // namespace

std::string setup_node(int host_mounts, const std::vector<int> &binds, std::vector<JailConfig> &out,
                       int &actual, std::string &no_watch) {
    // Private: nothing mounted here reaches the host, and nothing the host
    // mounts meanwhile changes the node's mount count.
    if (auto e = kit::private_node_namespace("sjail-bench", kit::HostMounts::Private); !e.empty()) {
        return e;
    }
    // Shared, as mounts are on systemd hosts, so the copies a builder makes
    // join peer groups just as they would on a real node.
    if (::mount(nullptr, kBase, nullptr, MS_SHARED, nullptr) != 0) {
        return kit::errno_text(std::string("make ") + kBase + " shared");
    }
    const int max_binds = binds.empty() ? 0 : *std::max_element(binds.begin(), binds.end());
    if (auto e = make_layout(max_binds); !e.empty()) {
        return e;
    }
    // Each prepared config adds two mounts: its state directory's self-bind
    // and the nsfs bind that keeps its namespace. (A job's namespaces add
    // three more while job entries are sampled: a node with one job.)
    const int missing = host_mounts - static_cast<int>(kit::mount_points().size()) -
                        2 * static_cast<int>(binds.size());
    if (auto e = add_host_mounts(std::max(missing, 0)); !e.empty()) {
        return e;
    }
    for (const int b : binds) {
        JailConfig jc;
        if (auto e = make_config(b, jc); !e.empty()) {
            return e;
        }
        if (auto s = jc.watch.start(jc.config); !s.ok()) {
            no_watch = s.message(); // steps then check fully, as on a kernel before 6.15
        }
        sjail::NodeNamespace ns;
        if (auto s = sjail::acquire_node_namespace(jc.config, ns); !s.ok()) {
            return "building the node namespace (" + std::to_string(b) + " binds): " + s.message();
        }
        out.push_back(std::move(jc));
    }
    actual = static_cast<int>(kit::mount_points().size());
    return "";
}

std::string check_inside_jail() {
    std::ifstream in("/etc/slurm-jail-release");
    std::string line;
    std::getline(in, line);
    if (line + "\n" != kRelease) {
        return "not inside the jail: /etc/slurm-jail-release says '" + line + "'";
    }
    if (::access(host_mounts_dir.c_str(), F_OK) == 0) {
        return "the host's mounts are visible inside the jail";
    }
    return "";
}

} // namespace bench
