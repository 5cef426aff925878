// SPDX-License-Identifier: Apache-2.0
// A file's identity, device and inode, and its "DEV:INO" text in the
// records the plugin keeps and passes between processes. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sjail {

// Device and inode of a file: what "/" must be inside the jail view, what a
// node namespace was built from.
struct FileId {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    bool operator==(const FileId &) const = default;
};

// "DEV:INO", both decimal.
std::string file_id_text(const FileId &id);

// The FileId of "DEV:INO", or nothing when `text` is anything else.
std::optional<FileId> parse_file_id(std::string_view text);

} // namespace sjail
