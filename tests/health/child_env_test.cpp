// SPDX-License-Identifier: Apache-2.0
#include "child_env.hpp"

#include <gtest/gtest.h>
#include <stdexcept>

namespace sjh {
namespace {

using Env = std::vector<std::string>;

const Env kCaller = {"PATH=/home/alice/bin:/usr/bin",
                     "LD_LIBRARY_PATH=/home/alice/lib",
                     "LD_PRELOAD=/home/alice/evil.so",
                     "CUDA_VISIBLE_DEVICES=0,1",
                     "SLURM_CONF=/etc/slurm/slurm.conf",
                     "NCCL_NET_PLUGIN=/home/alice/net.so",
                     "HOME=/home/alice"};

TEST(ChildEnv, OnlyAFixedPathAndTheKeptVariablesPass) {
    EXPECT_EQ(child_environment(kCaller, {"CUDA_VISIBLE_DEVICES"}, {}),
              (Env{std::string("PATH=") + kSafePath, "CUDA_VISIBLE_DEVICES=0,1"}));
    EXPECT_EQ(child_environment(kCaller, {"SLURM_CONF"}, {}),
              (Env{std::string("PATH=") + kSafePath, "SLURM_CONF=/etc/slurm/slurm.conf"}));
    EXPECT_EQ(child_environment({}, {"SLURM_CONF"}, {}), (Env{std::string("PATH=") + kSafePath}));
}

TEST(ChildEnv, PathIsNeverTakenFromTheCaller) {
    EXPECT_EQ(child_environment(kCaller, {"PATH"}, {}), (Env{std::string("PATH=") + kSafePath}));
}

TEST(ChildEnv, TheAdminsExtrasWin) {
    EXPECT_EQ(child_environment(kCaller, {"CUDA_VISIBLE_DEVICES"},
                                {"NCCL_DEBUG=WARN", "CUDA_VISIBLE_DEVICES=3", "X=a=b"}),
              (Env{std::string("PATH=") + kSafePath, "NCCL_DEBUG=WARN", "CUDA_VISIBLE_DEVICES=3",
                   "X=a=b"}));
}

TEST(ChildEnv, AnExtraThatIsNotKeyValueIsAnError) {
    EXPECT_THROW(child_environment({}, {}, {"NCCL_DEBUG"}), std::invalid_argument);
    try {
        child_environment({}, {}, {"=x"});
        FAIL() << "no error";
    } catch (const std::invalid_argument &e) {
        EXPECT_STREQ(e.what(), "bad environment entry '=x': write KEY=VALUE");
    }
}

} // namespace
} // namespace sjh
