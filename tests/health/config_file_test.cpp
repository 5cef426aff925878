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

} // namespace
} // namespace sjh
