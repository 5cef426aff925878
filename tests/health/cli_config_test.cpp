// SPDX-License-Identifier: Apache-2.0
#include "cli_config.hpp"

#include <gtest/gtest.h>
#include <stdexcept>

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

} // namespace
} // namespace sjh
