// SPDX-License-Identifier: Apache-2.0
#include "config_file.hpp"
#include "test_util.hpp"

#include <fstream>

namespace sjh {
namespace {

TEST(ConfigFile, CommandLineComesAfterTheConfigSoItWins) {
    const char *argv[] = {"prog", "--config=/nonexistent/health.conf"};
    EXPECT_THROW(args_with_config(2, argv, "gpu-check"), std::invalid_argument);
    test::TempDir dir;
    const auto conf = (dir.path() / "health.conf").string();
    std::ofstream(conf) << "[gpu-check]\nexpected-gpus = 8\n";
    const char *argv2[] = {"prog", "--config", conf.c_str(), "--expected-gpus", "4"};
    // CLI11 takes the arguments reversed: the config's value comes first.
    EXPECT_EQ(
        args_with_config(5, argv2, "gpu-check"),
        (std::vector<std::string>{"4", "--expected-gpus", conf, "--config", "--expected-gpus=8"}));
}

TEST(ConfigFile, TheNullDeviceIsAnEmptyConfig) {
    const char *argv[] = {"prog", "--config", "/dev/null", "--node", "n1"};
    EXPECT_EQ(args_with_config(5, argv, "gpu-check"),
              (std::vector<std::string>{"n1", "--node", "/dev/null", "--config"}));
}

TEST(ConfigFile, AConfigOthersCouldWriteIsRefused) {
    // It decides what the checks run as root.
    test::TempDir dir;
    const auto conf = dir.path() / "health.conf";
    std::ofstream(conf) << "[nccl-check]\nbinary = /home/alice/evil\n";
    std::filesystem::permissions(conf, std::filesystem::perms(0666));
    try {
        (void)config_section_args(conf, "nccl-check", true);
        FAIL() << "a world-writable config was read";
    } catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string(e.what()).find("config file: refusing '" + conf.string() + "': '" +
                                             conf.string() +
                                             "' is writable by group or others (mode 0666)"),
                  std::string::npos)
            << e.what();
    }
    std::filesystem::permissions(conf, std::filesystem::perms(0644));
    EXPECT_EQ(config_section_args(conf, "nccl-check", true),
              (std::vector<std::string>{"--binary=/home/alice/evil"}));
    EXPECT_TRUE(config_section_args(dir.path() / "none.conf", "nccl-check", false).empty());
}

} // namespace
} // namespace sjh
