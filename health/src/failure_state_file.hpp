// SPDX-License-Identifier: Apache-2.0
// The consecutive-failure counter's state file (thin system layer), written
// atomically.
#pragma once

#include <string>
#include <string_view>

namespace sjh {

// A missing file means 0. A corrupt file is an error naming the file.
unsigned read_failure_count(const std::string &path, std::string_view check);
void write_failure_count(const std::string &path, std::string_view check, unsigned count);

} // namespace sjh
