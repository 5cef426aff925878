// SPDX-License-Identifier: Apache-2.0
#include "xid.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

// Lines in the kernel's formats; the Xid message shapes follow NVIDIA's
// documented "NVRM: Xid (PCI:dddd:bb:dd): N, ..." form.
constexpr const char *kLog =
    "6,100,5000000,-;nvidia-nvswitch0: probe\n"
    "4,101,6000000,-;NVRM: Xid (PCI:0000:38:00): 79, pid=1234, GPU has fallen off the bus.\n"
    "4,102,7000000,-;NVRM: Xid (PCI:0000:18:00): 13, pid=77, Graphics SM Warp Exception\n"
    "[    8.000001] NVRM: Xid (PCI:0000:48:00): 48, pid=1, DBE (double bit error) ECC error\n"
    "garbage line\n";

TEST(Xid, ParsesKmsgAndDmesgRecords) {
    const auto events = parse_xid_log(kLog);
    ASSERT_EQ(events.size(), 3U);
    EXPECT_EQ(events[0].xid, 79U);
    EXPECT_EQ(events[0].pci, "0000:38:00");
    EXPECT_EQ(events[0].time_us, 6000000U);
    EXPECT_EQ(events[0].text, "Xid (PCI:0000:38:00): 79, pid=1234, GPU has fallen off the bus.");
    EXPECT_EQ(events[1].xid, 13U);
    EXPECT_EQ(events[2].xid, 48U);
    EXPECT_EQ(events[2].time_us, 8000001U);
}

TEST(Xid, OnlyRecentFatalOnesCount) {
    const auto events = parse_xid_log(kLog);
    const auto fatal = default_fatal_xids();
    // now = 10 s, window 5 s: all three are recent; 13 is not fatal.
    auto recent = recent_fatal_xids(events, fatal, 10000000, 5000000);
    ASSERT_EQ(recent.size(), 2U);
    EXPECT_EQ(recent[0].xid, 79U);
    EXPECT_EQ(recent[1].xid, 48U);
    // window 3 s: only the one at 8 s.
    recent = recent_fatal_xids(events, fatal, 10000000, 3000000);
    ASSERT_EQ(recent.size(), 1U);
    EXPECT_EQ(recent[0].xid, 48U);
}

TEST(Xid, DefaultListMatchesTheDocumentedOne) {
    const std::set<unsigned> documented{48, 56, 57, 58, 62, 63, 64, 65,  68,  69,
                                        73, 74, 79, 80, 81, 92, 95, 119, 120, 154};
    EXPECT_EQ(default_fatal_xids(), documented);
    EXPECT_FALSE(default_fatal_xids().contains(13)); // application faults do not drain
    EXPECT_FALSE(default_fatal_xids().contains(31));
    EXPECT_FALSE(default_fatal_xids().contains(43));
}

TEST(Xid, ListParsing) {
    EXPECT_EQ(parse_xid_list("48, 79,95"), (std::set<unsigned>{48, 79, 95}));
    EXPECT_THROW(parse_xid_list("48,,79"), std::invalid_argument);
    EXPECT_THROW(parse_xid_list("48;79"), std::invalid_argument);
    EXPECT_THROW(parse_xid_list(""), std::invalid_argument);
}

TEST(Xid, PciMatching) {
    EXPECT_TRUE(same_pci_device("00000000:38:00.0", "0000:38:00"));
    EXPECT_TRUE(same_pci_device("00000001:0B:00.0", "0001:0b:00"));
    EXPECT_FALSE(same_pci_device("00000000:38:00.0", "0000:39:00"));
    EXPECT_FALSE(same_pci_device("00000001:38:00.0", "0000:38:00"));
    EXPECT_FALSE(same_pci_device("", "0000:38:00"));
}

} // namespace
} // namespace sjh
