// SPDX-License-Identifier: Apache-2.0
#include "slurm_text.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

// As printed by scontrol 22.05.8 on this project's test cluster.
constexpr const char *kShowNode = R"(NodeName=n1 Arch=x86_64 CoresPerSocket=1 
   CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=1.21
   AvailableFeatures=(null)
   ActiveFeatures=(null)
   Gres=gpu:h100:8(S:0-1)
   NodeAddr=127.0.0.1 NodeHostName=vm Version=22.05.8
   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=main 
   CurrentWatts=0 AveWatts=0
   Reason=admin: bad fan [root@2026-11-22T00:13:33]

)";

TEST(SlurmText, ShowNode) {
    const auto n = parse_scontrol_node(kShowNode);
    EXPECT_EQ(n.name, "n1");
    EXPECT_EQ(n.state, "IDLE+DRAIN");
    EXPECT_EQ(n.reason, "admin: bad fan");
    EXPECT_TRUE(n.drained());
    EXPECT_EQ(parse_scontrol_gres(kShowNode), "gpu:h100:8(S:0-1)");
}

TEST(SlurmText, ShowNodeOneLinerAndNoReason) {
    const auto n =
        parse_scontrol_node("NodeName=n1 Arch=x86_64 Gres=(null) State=IDLE ThreadsPerCore=1 "
                            "Reason=slurm-jail-health: gpu: GPU 3 (00000000:13:00.0): lost "
                            "[root@2026-11-22T00:13:33]\n");
    EXPECT_EQ(n.reason, "slurm-jail-health: gpu: GPU 3 (00000000:13:00.0): lost");
    EXPECT_EQ(parse_scontrol_gres("NodeName=n1 Gres=(null) State=IDLE"), "");
    const auto idle = parse_scontrol_node("NodeName=n2 State=IDLE+NOT_RESPONDING\n");
    EXPECT_EQ(idle.reason, "");
    EXPECT_THROW(parse_scontrol_node("Node n1 not found\n"), std::runtime_error);
}

TEST(SlurmText, SinfoNodesAreDeduplicated) {
    const auto nodes = parse_sinfo_nodes("n1|idle\nn2|down*\nn1|idle\nn3|drained\n");
    ASSERT_EQ(nodes.size(), 3U);
    EXPECT_EQ(nodes[1].name, "n2");
    EXPECT_EQ(nodes[1].state, "down*");
}

TEST(SlurmText, Eligibility) {
    for (const char *ok : {"idle", "mixed", "allocated", "completing"}) {
        EXPECT_TRUE(eligible_for_nccl(ok)) << ok;
    }
    for (const char *no :
         {"drained", "draining", "down", "down*", "idle*", "idle~", "fail", "failing", "maint",
          "reboot^", "unknown", "future", "reserved", "inval", "idle#", ""}) {
        EXPECT_FALSE(eligible_for_nccl(no)) << no;
    }
    // A node the new-node gate holds is in its maintenance reservation, which the job names.
    for (const char *held : {"maint", "reserved", "idle", "allocated"}) {
        EXPECT_TRUE(eligible_for_nccl(held, true)) << held;
    }
    for (const char *no : {"maint*", "drained", "down", "reserved~"}) {
        EXPECT_FALSE(eligible_for_nccl(no, true)) << no;
    }
}

TEST(SlurmText, ShellQuote) {
    EXPECT_EQ(shell_quote("plain"), "'plain'");
    EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(SlurmText, FailureMessagesNameCauseAndFix) {
    const auto down = explain_slurm_failure(
        "scontrol", "slurm_load_node error: Unable to contact slurm controller (connect failure)\n",
        1);
    EXPECT_NE(down.find("cannot reach slurmctld"), std::string::npos);
    EXPECT_NE(down.find("SlurmctldHost"), std::string::npos);
    EXPECT_NE(down.find("nothing was changed"), std::string::npos);
    const auto other = explain_slurm_failure("scontrol", "Invalid node name specified\n", 1);
    EXPECT_EQ(other, "scontrol failed with exit code 1: Invalid node name specified");
}

} // namespace
} // namespace sjh
