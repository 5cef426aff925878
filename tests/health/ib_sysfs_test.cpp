// SPDX-License-Identifier: Apache-2.0
#include "ib_checks.hpp"
#include "ib_state_file.hpp"
#include "ib_sysfs.hpp"
#include "test_util.hpp"

namespace sjh {
namespace {

namespace fs = std::filesystem;

struct PortFiles {
    std::string state = "4: ACTIVE";
    std::string phys_state = "5: LinkUp";
    std::string rate = "400 Gb/sec (4X NDR)";
    std::string link_layer = "InfiniBand";
    std::string link_downed = "0";
    std::string symbol_error = "0";
};

// A sysfs tree as the kernel lays it out: the HCA lives under its PCI device
// and /sys/class/infiniband/<hca> is a symlink to it; each file ends in '\n'.
class SysfsTree {
  public:
    const fs::path &root() const { return dir_.path(); }

    void add_port(const std::string &hca, const std::string &pci, unsigned port,
                  const PortFiles &f) {
        const auto device = root() / "devices/pci0000:00" / pci / "infiniband" / hca;
        const auto link = root() / "class/infiniband" / hca;
        if (!fs::exists(link)) {
            fs::create_directories(link.parent_path());
            fs::create_directories(device);
            fs::create_symlink(fs::relative(device, link.parent_path()), link);
        }
        const auto dir = device / "ports" / std::to_string(port);
        fs::create_directories(dir / "counters");
        write(dir / "state", f.state);
        write(dir / "phys_state", f.phys_state);
        write(dir / "rate", f.rate);
        write(dir / "link_layer", f.link_layer);
        write(dir / "counters/link_downed", f.link_downed);
        write(dir / "counters/symbol_error", f.symbol_error);
    }

    void set_counter(const std::string &hca, unsigned port, const std::string &counter,
                     const std::string &value) {
        write(root() / "class/infiniband" / hca / "ports" / std::to_string(port) / "counters" /
                  counter,
              value);
    }

  private:
    static void write(const fs::path &path, const std::string &text) {
        std::ofstream(path, std::ios::trunc) << text << '\n';
    }
    test::TempDir dir_;
};

// Two ConnectX-7 at NDR, the second HCA's spare port without cable, and a
// RoCE port on a ConnectX-6 Dx.
void add_gpu_node_ports(SysfsTree &t) {
    t.add_port("mlx5_0", "0000:1b:00.0", 1, {});
    t.add_port("mlx5_1", "0000:2b:00.0", 1, {});
    t.add_port("mlx5_1", "0000:2b:00.0", 2,
               {"1: DOWN", "3: Disabled", "10 Gb/sec (4X SDR)", "InfiniBand", "0", "0"});
    t.add_port("mlx5_2", "0000:3b:00.0", 1,
               {"4: ACTIVE", "5: LinkUp", "100 Gb/sec (4X EDR)", "Ethernet", "1", "0"});
}

TEST(IbSysfs, ReadsEveryPortOfEveryHca) {
    SysfsTree t;
    add_gpu_node_ports(t);
    const auto ports = read_ib_ports(t.root().string());
    ASSERT_EQ(ports.size(), 4U);
    EXPECT_EQ(ports[0].name, "mlx5_0/1");
    EXPECT_EQ(ports[0].state, "4: ACTIVE");
    EXPECT_EQ(ports[0].phys_state, "5: LinkUp");
    EXPECT_EQ(ports[0].rate, "400 Gb/sec (4X NDR)");
    EXPECT_EQ(ports[0].link_layer, "InfiniBand");
    EXPECT_EQ(ports[0].link_downed, 0U);
    EXPECT_EQ(ports[1].name, "mlx5_1/1");
    EXPECT_EQ(ports[2].name, "mlx5_1/2");
    EXPECT_FALSE(port_is_up(ports[2]));
    EXPECT_EQ(ports[3].name, "mlx5_2/1");
    EXPECT_EQ(ports[3].link_layer, "Ethernet");
    EXPECT_EQ(ports[3].link_downed, 1U);
}

TEST(IbSysfs, MissingOrOddCountersAreUnknown) {
    SysfsTree t;
    t.add_port("mlx5_0", "0000:1b:00.0", 1, {});
    t.set_counter("mlx5_0", 1, "symbol_error", "lots");
    fs::remove(t.root() / "class/infiniband/mlx5_0/ports/1/counters/link_downed");
    const auto ports = read_ib_ports(t.root().string());
    ASSERT_EQ(ports.size(), 1U);
    EXPECT_EQ(ports[0].link_downed, std::nullopt);
    EXPECT_EQ(ports[0].symbol_error, std::nullopt);
}

TEST(IbSysfs, NodeWithoutRdmaHasNoPorts) {
    test::TempDir dir;
    EXPECT_TRUE(read_ib_ports(dir.path().string()).empty());
}

TEST(IbSysfs, LinkDownedGrowthThroughTheFiles) {
    SysfsTree t;
    add_gpu_node_ports(t);
    test::TempDir state_dir;
    const auto state_path = (state_dir.path() / kIbStateFile).string();
    EXPECT_TRUE(read_ib_state(state_path).empty()); // first run

    // First run passes and records what it saw.
    const auto first = read_ib_ports(t.root().string());
    Evaluation e1;
    evaluate_ib(first, {}, read_ib_state(state_path), e1);
    EXPECT_FALSE(e1.must_drain());
    write_ib_state(state_path, next_ib_state(first, read_ib_state(state_path), true));

    // The cable of mlx5_0/1 flapped twice and mlx5_1/1 trained at HDR.
    t.set_counter("mlx5_0", 1, "link_downed", "2");
    t.add_port("mlx5_1", "0000:2b:00.0", 1,
               {"4: ACTIVE", "5: LinkUp", "200 Gb/sec (4X HDR)", "InfiniBand", "0", "0"});
    const auto second = read_ib_ports(t.root().string());
    const auto previous = read_ib_state(state_path);
    Evaluation e2;
    evaluate_ib(second, {}, previous, e2);
    ASSERT_EQ(e2.problems.size(), 2U);
    EXPECT_EQ(e2.problems[0].message,
              "IB port mlx5_0/1: link went down 2 times since the last run (link_downed 0 -> 2)");
    EXPECT_EQ(e2.problems[1].message,
              "IB port mlx5_1/1: rate 200 Gb/sec (4X HDR), below the expected 400 Gb/s");
    write_ib_state(state_path, next_ib_state(second, previous, false));

    // No new flap, the port back at NDR: the next run passes.
    t.add_port("mlx5_1", "0000:2b:00.0", 1, {});
    Evaluation e3;
    evaluate_ib(read_ib_ports(t.root().string()), {}, read_ib_state(state_path), e3);
    EXPECT_TRUE(e3.problems.empty());
    EXPECT_EQ(read_ib_state(state_path).passed_rates.at("mlx5_1/1"), 400.0);
}

TEST(IbStateFile, CorruptFileIsAClearError) {
    test::TempDir dir;
    const auto path = (dir.path() / kIbStateFile).string();
    std::ofstream(path) << "{\"passed_rates\": ";
    try {
        (void)read_ib_state(path);
        FAIL() << "no error for a corrupt state file";
    } catch (const std::runtime_error &e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(path), std::string::npos) << msg;
        EXPECT_NE(msg.find("delete it"), std::string::npos) << msg;
    }
    EXPECT_TRUE(fs::exists(path)); // never deleted for the user
}

TEST(IbStateFile, ReplacedThroughARename) {
    test::TempDir dir;
    const auto path = (dir.path() / kIbStateFile).string();
    IbState s;
    s.passed_rates = {{"mlx5_0/1", 400}};
    write_ib_state(path, s);
    s.counters = {{"mlx5_0/1", {1, 2}}};
    write_ib_state(path, s);
    EXPECT_EQ(read_ib_state(path), s);
    std::size_t files = 0;
    for ([[maybe_unused]] const auto &e : fs::directory_iterator(dir.path())) {
        ++files;
    }
    EXPECT_EQ(files, 1U);
}

} // namespace
} // namespace sjh
