// SPDX-License-Identifier: Apache-2.0
// Root-level, in the host's own mount namespace: preparing the jail adds only
// the two node-level mounts under the state directory, jobs add nothing, and
// releasing removes them again.
#include "sandbox.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/node_namespace.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

TEST(HostMountTable, OnlyTheStateMountsAppearAndReleaseRemovesThem) {
    const std::string top = "/var/lib/slurm-jail-tests";
    const bool made_top = std::filesystem::create_directories(top);
    ASSERT_EQ(::chmod(top.c_str(), 0755), 0);
    std::string base = top + "/hostXXXXXX";
    ASSERT_NE(::mkdtemp(base.data()), nullptr);
    ASSERT_EQ(::chmod(base.c_str(), 0755), 0);

    sjail::Config config;
    ASSERT_EQ(sandbox::make_layout(base, config), "");
    ASSERT_TRUE(kit::mounts_below(base).empty());
    const auto host_proc = kit::mounts_below("/proc");
    const auto host_dev = kit::mounts_below("/dev");

    sjail::NodeNamespace ns;
    const auto s = sjail::acquire_node_namespace(config, ns);
    ASSERT_TRUE(s.ok()) << s.message();
    const std::vector<std::string> node_level = {base + "/state", base + "/state/ns"};
    EXPECT_EQ(kit::mounts_below(base), node_level);

    // A "step": enter in a child, as slurmstepd does, and run a "task".
    const std::string step = kit::in_child([&] {
        if (auto e = sjail::enter_namespace(ns.fd.get()); !e.ok()) {
            return e.message();
        }
        CHILD_EXPECT(kit::read_file("/etc/slurm-jail-release") == "JAIL");
        return std::string();
    });
    EXPECT_EQ(step, "");
    EXPECT_EQ(kit::mounts_below(base), node_level);
    // The jail's fresh /proc and its /dev bind stay in the jail namespace.
    EXPECT_EQ(kit::mounts_below("/proc"), host_proc);
    EXPECT_EQ(kit::mounts_below("/dev"), host_dev);
    ns.fd.reset();

    const auto r = sjail::release_node_namespace(config);
    EXPECT_TRUE(r.ok()) << r.message();
    EXPECT_TRUE(kit::mounts_below(base).empty());
    std::filesystem::remove_all(base);
    if (made_top) {
        ::rmdir(top.c_str()); // the machine as it was
    }
}
