// SPDX-License-Identifier: Apache-2.0
// A fresh temporary directory for tests, removed with everything in it.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace kit {

class TempDir {
  public:
    // Below `base`: the system's temp directory unless a test needs a chain
    // of root-owned directories that a sticky /tmp would break.
    explicit TempDir(const std::filesystem::path &base = std::filesystem::temp_directory_path()) {
        std::string tmpl = (base / "sjail-test.XXXXXX").string();
        path_ = ::mkdtemp(tmpl.data());
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    ~TempDir() { std::filesystem::remove_all(path_); }
    const std::filesystem::path &path() const { return path_; }

  private:
    std::filesystem::path path_;
};

} // namespace kit
