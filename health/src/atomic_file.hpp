// SPDX-License-Identifier: Apache-2.0
// Replace a file's contents atomically: write a new temp file (mkostemp) in
// the same directory, fsync it, rename it over the target (a symlink there is
// replaced, never followed), fsync the directory.
#pragma once

#include <string>
#include <string_view>

namespace sjh {

// Throws std::runtime_error naming the path and the errno text.
void write_file_atomically(const std::string &path, std::string_view contents,
                           unsigned mode = 0644);

} // namespace sjh
