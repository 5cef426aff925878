// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the health tests.
#pragma once

#include "kit/temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>

namespace sjh::test {

inline std::filesystem::path fixtures() {
    return SJH_FIXTURES;
}

inline std::string read_file(const std::filesystem::path &p) {
    std::ifstream in(p);
    if (!in) {
        ADD_FAILURE() << "cannot read fixture " << p
                      << " (the fixtures live in ../shared/fixtures next to the repo)";
        return {};
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline std::string nccl_fixture(const std::string &name) {
    return read_file(fixtures() / "nccl" / name);
}

using kit::TempDir;

} // namespace sjh::test
