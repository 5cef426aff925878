// SPDX-License-Identifier: Apache-2.0
#include "slurm_client.hpp"

#include <gtest/gtest.h>

namespace sjh {
namespace {

TEST(SlurmClient, MissingScontrolIsAClearError) {
    SlurmTools t;
    t.scontrol = "/nonexistent/scontrol";
    try {
        SlurmClient(t).show_node("n1");
        FAIL() << "no error";
    } catch (const SlurmError &e) {
        EXPECT_NE(std::string(e.what()).find("cannot run '/nonexistent/scontrol'"),
                  std::string::npos);
        EXPECT_NE(std::string(e.what()).find("install slurm-client"), std::string::npos);
    }
}

} // namespace
} // namespace sjh
