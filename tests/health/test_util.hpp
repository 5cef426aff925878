// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the health tests.
#pragma once

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

// A fresh temporary directory, removed with everything in it at scope end.
class TempDir {
  public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "sjh-test.XXXXXX").string();
        path_ = ::mkdtemp(tmpl.data());
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    ~TempDir() { std::filesystem::remove_all(path_); }
    const std::filesystem::path &path() const { return path_; }

  private:
    std::filesystem::path path_;
};

} // namespace sjh::test
