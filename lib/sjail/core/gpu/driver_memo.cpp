// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/gpu/driver_memo.hpp"

#include "sjail/core/whole_number.hpp"

namespace sjail {
namespace {

constexpr std::string_view kHeader = "slurm-jail driver memo v1\n";

bool has_newline(const std::string &s) {
    return s.find('\n') != std::string::npos;
}

// The next line of `text` from `pos` (without its newline); false at the end
// or on a last line without one.
bool next_line(std::string_view text, std::size_t &pos, std::string_view &line) {
    const std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
        return false;
    }
    line = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
}

} // namespace

std::string driver_memo_text(const std::string &key, const std::vector<LibraryName> &candidates) {
    if (has_newline(key)) {
        return "";
    }
    std::string text = std::string(kHeader) + key + "\n" + std::to_string(candidates.size()) + "\n";
    for (const auto &c : candidates) {
        if (has_newline(c.dir) || has_newline(c.name) || has_newline(c.real)) {
            return "";
        }
        text += c.dir + "\n" + c.name + "\n" + c.real + "\n";
    }
    return text;
}

bool driver_memo_lookup(std::string_view memo, const std::string &key,
                        std::vector<LibraryName> &candidates) {
    if (!memo.starts_with(kHeader)) {
        return false;
    }
    std::size_t pos = kHeader.size();
    std::string_view line;
    if (!next_line(memo, pos, line) || line != key || !next_line(memo, pos, line)) {
        return false;
    }
    const auto count = whole_number<std::size_t>(line);
    if (!count) {
        return false;
    }
    std::vector<LibraryName> found;
    for (std::size_t i = 0; i < *count; ++i) {
        std::string_view dir;
        std::string_view name;
        std::string_view real;
        if (!next_line(memo, pos, dir) || !next_line(memo, pos, name) ||
            !next_line(memo, pos, real)) {
            return false;
        }
        found.push_back({std::string(dir), std::string(name), std::string(real)});
    }
    if (pos != memo.size()) {
        return false;
    }
    candidates = std::move(found);
    return true;
}

} // namespace sjail
