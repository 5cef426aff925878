// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/file_id.hpp"

#include "sjail/core/whole_number.hpp"

namespace sjail {

std::string file_id_text(const FileId &id) {
    return std::to_string(id.dev) + ":" + std::to_string(id.ino);
}

std::optional<FileId> parse_file_id(std::string_view text) {
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos) {
        return std::nullopt;
    }
    const auto dev = whole_number<std::uint64_t>(text.substr(0, colon));
    const auto ino = whole_number<std::uint64_t>(text.substr(colon + 1));
    if (!dev || !ino) {
        return std::nullopt;
    }
    return FileId{.dev = *dev, .ino = *ino};
}

} // namespace sjail
