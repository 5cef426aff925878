// SPDX-License-Identifier: Apache-2.0
// What the node's loader cache lists for the NVIDIA driver, kept between
// steps. Every step looks for the driver (the namespace stamp depends on it),
// and reading the node's whole /etc/ld.so.cache is most of that look. The
// memo is keyed by the cache file's identity (device, inode, size, mtime,
// ctime): ldconfig writes a new file, so any new cache is read again.
#pragma once

#include "sjail/core/gpu/nvidia_driver.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sjail {

// The memo's text: the key line, then the candidates. Empty when a name
// holds a newline (such a cache is read at every step).
std::string driver_memo_text(const std::string &key, const std::vector<LibraryName> &candidates);

// The candidates `memo` holds for `key`; false when it holds another key or
// is not a well-formed memo.
bool driver_memo_lookup(std::string_view memo, const std::string &key,
                        std::vector<LibraryName> &candidates);

} // namespace sjail
