// SPDX-License-Identifier: Apache-2.0
#include "subprocess.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

using namespace std::chrono_literals;

TEST(Subprocess, CapturesOutputAndExitCode) {
    CommandOptions o;
    const auto r = run_command({"sh", "-c", "echo out; echo err >&2; exit 7"}, o);
    EXPECT_TRUE(r.started);
    EXPECT_EQ(r.exit_code, 7);
    EXPECT_EQ(r.out, "out\n");
    EXPECT_EQ(r.err, "err\n");
}

TEST(Subprocess, MergesStderrAndPassesEnv) {
    CommandOptions o;
    o.merge_stderr = true;
    o.extra_env = {"SJH_X=42"};
    const auto r = run_command({"sh", "-c", "echo $SJH_X; echo e >&2"}, o);
    EXPECT_EQ(r.out, "42\ne\n");
}

TEST(Subprocess, TimeoutKillsTheWholeGroup) {
    CommandOptions o;
    o.timeout = 300ms;
    const auto r = run_command({"sh", "-c", "sleep 30 & sleep 30; echo never"}, o);
    EXPECT_TRUE(r.timed_out);
    EXPECT_EQ(r.out, "");
}

TEST(Subprocess, ExecFailureIsReported) {
    const auto r = run_command({"/nonexistent/tool"}, {});
    EXPECT_FALSE(r.started);
    EXPECT_EQ(r.exec_error, "No such file or directory");
}

} // namespace
} // namespace sjh
