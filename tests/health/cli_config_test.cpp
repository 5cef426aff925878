#include "cli_config.hpp"

#include "test_util.hpp"

#include <fstream>

namespace sjh {
namespace {

constexpr const char *kConf = R"(# /etc/slurm-jail/health.conf
[gpu-check]
expected-gpus = 8
drain-after=2
; a comment
metrics-file = "/var/lib/node_exporter/textfile/gpu.prom"

[nccl-check]
threshold = H100x8=400
threshold = A100x8=200
)";

TEST(CliConfig, OnlyTheProgramsSectionBecomesArguments) {
    EXPECT_EQ(
        config_args(kConf, "gpu-check"),
        (std::vector<std::string>{"--expected-gpus=8", "--drain-after=2",
                                  "--metrics-file=/var/lib/node_exporter/textfile/gpu.prom"}));
    EXPECT_EQ(config_args(kConf, "nccl-check"),
              (std::vector<std::string>{"--threshold=H100x8=400", "--threshold=A100x8=200"}));
    EXPECT_TRUE(config_args(kConf, "nccl-submit").empty());
}

TEST(CliConfig, MalformedLinesAreErrorsNamingTheLine) {
    try {
        config_args("[gpu-check]\nexpected-gpus 8\n", "gpu-check");
        FAIL() << "no error";
    } catch (const std::invalid_argument &e) {
        EXPECT_STREQ(e.what(),
                     "config line 2: 'expected-gpus 8' is not 'key = value' or '[section]'");
    }
    EXPECT_THROW(config_args("= 8\n", "gpu-check"), std::invalid_argument);
}

TEST(CliConfig, CommandLineComesAfterTheConfigSoItWins) {
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

} // namespace
} // namespace sjh
