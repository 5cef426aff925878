// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/node/generation_holds.hpp"
#include "sjail/core/node/jail_generation.hpp"

#include <gtest/gtest.h>

using namespace sjail;

namespace {

// The message of parsing `text`, "" when it parses.
std::string refusal(std::string_view text) {
    LiveGeneration live;
    return parse_live_generation("/mnt/jail/.slurm-jail/live", text, live).message();
}

bool mentions(const std::string &message, std::string_view part) {
    return message.find(part) != std::string::npos;
}

} // namespace

TEST(JailGeneration, ReadsWhatPopulateJailWrites) {
    const LiveGeneration written{3, 2, {"/home", "/opt/datasets"}};
    const std::string text = format_live_generation(written);
    EXPECT_TRUE(text.starts_with("# slurm-jail: the live generation"));
    LiveGeneration read;
    ASSERT_TRUE(parse_live_generation("live", text, read).ok());
    EXPECT_EQ(read, written);

    const LiveGeneration first{1, std::nullopt, {"/home"}};
    ASSERT_TRUE(parse_live_generation("live", format_live_generation(first), read).ok());
    EXPECT_EQ(read, first);
}

TEST(JailGeneration, CommentsAndBlankLinesAreSkipped) {
    LiveGeneration live;
    ASSERT_TRUE(
        parse_live_generation("live", "\n# a note\ndata=/home\n\ngeneration=12\n", live).ok());
    EXPECT_EQ(live.generation, 12U);
    EXPECT_FALSE(live.previous);
}

TEST(JailGeneration, GenerationIsOneWholeNumber) {
    EXPECT_TRUE(mentions(refusal("data=/home\n"), "names no generation="));
    EXPECT_TRUE(mentions(refusal(""), "names no generation="));
    EXPECT_TRUE(mentions(refusal("generation=1\ngeneration=2\ndata=/home\n"), "twice"));
    for (const char *bad : {"generation=0", "generation=-1", "generation=01", "generation= 1",
                            "generation=1x", "generation=", "generation=99999999999999999999"}) {
        EXPECT_TRUE(mentions(refusal(std::string(bad) + "\ndata=/home\n"), "generation number"))
            << bad;
    }
}

TEST(JailGeneration, PreviousIsAnotherGeneration) {
    EXPECT_TRUE(mentions(refusal("generation=2\nprevious=2\ndata=/home\n"), "itself"));
    EXPECT_TRUE(mentions(refusal("generation=3\nprevious=1\nprevious=2\ndata=/home\n"), "twice"));
    EXPECT_TRUE(mentions(refusal("generation=3\nprevious=x\ndata=/home\n"), "generation number"));
}

TEST(JailGeneration, UnknownLinesAndLargeFilesFail) {
    EXPECT_TRUE(mentions(refusal("generation=1\ndata=/home\njail=/x\n"), "not generation="));
    EXPECT_TRUE(mentions(refusal("generation=1\ndata=/home\nhello\n"), "'hello'"));
    const std::string big = "generation=1\ndata=/home\n" + std::string(kLiveFileMax, '#');
    EXPECT_TRUE(mentions(refusal(big), "larger than 4096 bytes"));
}

TEST(JailGeneration, HomeIsAlwaysData) {
    EXPECT_TRUE(mentions(refusal("generation=1\n"), "no data=/home"));
    EXPECT_TRUE(mentions(refusal("generation=1\ndata=/scratch\n"), "no data=/home"));
}

TEST(JailGeneration, DataPathsAreDistinctTrees) {
    EXPECT_TRUE(mentions(refusal("generation=1\ndata=/home\ndata=/home\n"), "given twice"));
    EXPECT_TRUE(mentions(refusal("generation=1\ndata=/home\ndata=/home/alice\n"),
                         "data=/home/alice lies below data=/home"));
    EXPECT_EQ(refusal("generation=1\ndata=/home\ndata=/homes\n"), "");
}

TEST(JailGeneration, DataPathsArePlainAbsolutePaths) {
    for (const char *bad : {"data=home", "data=/home/", "data=/a//b", "data=/a/../b", "data=/a/./b",
                            "data=/a b", "data=/a:b", "data=/a*", "data=/a$b", "data=/"}) {
        EXPECT_FALSE(check_data_path(std::string(bad).substr(5)).ok()) << bad;
        EXPECT_NE(refusal(std::string("generation=1\ndata=/home\n") + bad + "\n"), "") << bad;
    }
    for (const char *good : {"/opt/datasets", "/scratch", "/srv/a.b_c+d-e@f", "/root"}) {
        EXPECT_TRUE(check_data_path(good).ok()) << good;
    }
}

TEST(JailGeneration, DataNeverCoversWhatRootReads) {
    // A user-owned tree bound over (or into, or around) a path that root
    // code on the node loads from the jail would be root on every node.
    for (const char *bad : {"/etc", "/etc/security/limits.d", "/usr", "/usr/local",
                            "/usr/local/cuda", "/usr/lib/locale", "/lib64", "/bin"}) {
        const auto s = check_data_path(bad);
        EXPECT_TRUE(mentions(s.message(), "root on the node reads")) << bad;
    }
    EXPECT_TRUE(mentions(check_data_path("/.slurm-jail").message(), "populate-jail's own state"));
    EXPECT_TRUE(mentions(check_data_path("/.slurm-jail/x").message(), "own state"));
}

TEST(JailGeneration, GenerationDirectory) {
    EXPECT_EQ(generation_dir(1), "generations/1");
    EXPECT_EQ(generation_dir(42), "generations/42");
}

TEST(JailGeneration, TheNodesMemoOfTheLiveFile) {
    const LiveMemo memo =
        parse_live_memo("at=120 /mnt/jail\nlive 2049:12 70 1.5 1.5\ngeneration=3\n"
                        "data=/home\n");
    EXPECT_EQ(memo.at_s, 120);
    EXPECT_EQ(memo.volume, "/mnt/jail");
    EXPECT_EQ(memo.key, "live 2049:12 70 1.5 1.5");
    EXPECT_EQ(memo.text, "generation=3\ndata=/home\n");
    EXPECT_EQ(parse_live_memo("at=120 /mnt/jail\nnone\n").key, "none");
    for (const char *bad : {"", "at=120 /mnt/jail", "at=120\nnone\n", "when=1 /v\nnone\n"}) {
        EXPECT_EQ(parse_live_memo(bad).at_s, -1) << bad;
    }
    EXPECT_EQ(parse_live_memo("at=x /v\nnone\n").at_s, -1);
}

TEST(GenerationHolds, TheNodesRecordListsEachGenerationOnce) {
    EXPECT_EQ(format_node_holds({3, 1}),
              "# slurm-jail: the generations this node holds (written by chroot.so; do not "
              "edit)\ngeneration=1\ngeneration=3\n");
    EXPECT_EQ(format_node_holds({}).find("generation="), std::string::npos);
}

TEST(JailGeneration, AGenerationNumberIsAPlainWholeNumberFromOne) {
    EXPECT_EQ(parse_generation_number("12"), 12U);
    EXPECT_FALSE(parse_generation_number(""));
    EXPECT_FALSE(parse_generation_number("0"));
    EXPECT_FALSE(parse_generation_number("012"));
    EXPECT_FALSE(parse_generation_number("2.building"));
    EXPECT_FALSE(parse_generation_number("-2"));
}

TEST(GenerationHolds, ANodeNamesItsRecordByItsHostName) {
    EXPECT_TRUE(valid_node_record_name("gpu-node-17.cluster_a"));
    for (const char *bad : {"", ".hidden", "a/b", "..", "node 1", "nöde"}) {
        EXPECT_FALSE(valid_node_record_name(bad)) << bad;
    }
    EXPECT_FALSE(valid_node_record_name(std::string(65, 'n')));
}
