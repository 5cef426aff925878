// SPDX-License-Identifier: Apache-2.0
#include "ib_ports.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

// The texts a ConnectX-7 shows in sysfs, up at NDR and down on a pulled cable.
IbPortReading port(std::string state, std::string phys_state) {
    IbPortReading p;
    p.name = "mlx5_0/1";
    p.state = std::move(state);
    p.phys_state = std::move(phys_state);
    p.rate = "400 Gb/sec (4X NDR)";
    p.link_layer = "InfiniBand";
    return p;
}

TEST(IbPorts, UpOnlyWhenActiveAndLinkUp) {
    EXPECT_TRUE(port_is_up(port("4: ACTIVE", "5: LinkUp")));
    EXPECT_FALSE(port_is_up(port("1: DOWN", "3: Disabled")));
    EXPECT_FALSE(port_is_up(port("1: DOWN", "2: Polling")));
    // Trained physically but not yet brought up by the subnet manager.
    EXPECT_FALSE(port_is_up(port("2: INIT", "5: LinkUp")));
    // Logically up while the link retrains.
    EXPECT_FALSE(port_is_up(port("4: ACTIVE", "6: LinkErrorRecovery")));
    EXPECT_FALSE(port_is_up(port("", "")));
}

TEST(IbPorts, StateNameWithoutTheNumber) {
    EXPECT_EQ(port_state_name("4: ACTIVE"), "ACTIVE");
    EXPECT_EQ(port_state_name("3: Disabled\n"), "Disabled");
    EXPECT_EQ(port_state_name("ACTIVE"), "ACTIVE");
    EXPECT_EQ(port_state_name("x: ACTIVE"), "x: ACTIVE");
}

TEST(IbPorts, RateFromTheSysfsText) {
    EXPECT_EQ(parse_ib_rate("400 Gb/sec (4X NDR)"), 400.0);
    EXPECT_EQ(parse_ib_rate("200 Gb/sec (4X HDR)\n"), 200.0);
    EXPECT_EQ(parse_ib_rate("100 Gb/sec (4X EDR)"), 100.0); // as mlx5 shows a RoCE port
    EXPECT_EQ(parse_ib_rate("2.5 Gb/sec (1X SDR)"), 2.5);
    EXPECT_EQ(parse_ib_rate(""), std::nullopt);
    EXPECT_EQ(parse_ib_rate("invalid"), std::nullopt);
    EXPECT_EQ(parse_ib_rate("400 Mb/sec"), std::nullopt);
}

TEST(IbPorts, PortListInOrderWithoutDuplicates) {
    EXPECT_EQ(parse_ib_port_list("mlx5_0/1,mlx5_1/1"),
              (std::vector<std::string>{"mlx5_0/1", "mlx5_1/1"}));
    EXPECT_EQ(parse_ib_port_list(" mlx5_1/2 , mlx5_0/1,mlx5_1/2"),
              (std::vector<std::string>{"mlx5_1/2", "mlx5_0/1"}));
    EXPECT_EQ(parse_ib_port_list("ibp24s0/1"), (std::vector<std::string>{"ibp24s0/1"}));
}

TEST(IbPorts, MalformedPortEntryNamesItAndTheForm) {
    for (const char *bad : {"mlx5_0", "mlx5_0/", "/1", "mlx5_0/x", "mlx5_0/0", "mlx5_0/256",
                            "a/b/1", "../1", "mlx5_0/1,", "mlx5 0/1"}) {
        try {
            (void)parse_ib_port_list(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const std::invalid_argument &e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find("--ib-ports entry"), std::string::npos) << msg;
            EXPECT_NE(msg.find("e.g. --ib-ports mlx5_0/1,mlx5_1/1"), std::string::npos) << msg;
        }
    }
    try {
        (void)parse_ib_port_list("mlx5_0/1,mlx5_1");
        ADD_FAILURE() << "accepted a list with one bad entry";
    } catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string(e.what()).find("'mlx5_1'"), std::string::npos) << e.what();
    }
}

TEST(IbPorts, MinRate) {
    EXPECT_EQ(parse_ib_min_rate("400"), 400.0);
    EXPECT_EQ(parse_ib_min_rate(" 200 Gb/s"), 200.0);
    EXPECT_EQ(parse_ib_min_rate("12.5"), 12.5);
    for (const char *bad : {"", "fast", "0", "-400", "400 Mb/s", "NDR", "400x"}) {
        try {
            (void)parse_ib_min_rate(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const std::invalid_argument &e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find(std::string("--ib-min-rate '") + bad + "'"), std::string::npos)
                << msg;
            EXPECT_NE(msg.find("e.g. 400 for NDR"), std::string::npos) << msg;
        }
    }
}

} // namespace
} // namespace sjh
