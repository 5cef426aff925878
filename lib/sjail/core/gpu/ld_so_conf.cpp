// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/gpu/ld_so_conf.hpp"

#include "sjail/core/path_rules.hpp"

namespace sjail {
namespace {

bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// `word` followed by a blank, at the start of `line` (ldconfig's test).
bool starts_with_keyword(std::string_view line, std::string_view word, bool any_case) {
    if (line.size() <= word.size() || !is_blank(line[word.size()])) {
        return false;
    }
    for (std::size_t i = 0; i < word.size(); ++i) {
        char c = line[i];
        if (any_case && c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
        if (c != word[i]) {
            return false;
        }
    }
    return true;
}

std::string clean_dir(std::string_view line) {
    std::string dir(line.substr(0, line.find('=')));
    while (!dir.empty() && is_space(dir.back())) {
        dir.pop_back();
    }
    while (dir.size() > 1 && dir.back() == '/') {
        dir.pop_back();
    }
    if (!dir.empty() && dir.front() != '/') {
        return std::string(1, '/') + dir;
    }
    return dir;
}

void add_includes(std::string_view rest, std::string_view file_path, LdSoConf &conf) {
    std::size_t pos = 0;
    while (pos < rest.size()) {
        while (pos < rest.size() && is_blank(rest[pos])) {
            ++pos;
        }
        std::size_t end = pos;
        while (end < rest.size() && !is_blank(rest[end])) {
            ++end;
        }
        if (end > pos) {
            std::string pattern(rest.substr(pos, end - pos));
            if (pattern.front() != '/') {
                pattern = parent_dir(file_path) + "/" + pattern;
            }
            conf.includes.push_back(std::move(pattern));
        }
        pos = end;
    }
}

} // namespace

LdSoConf parse_ld_so_conf(std::string_view text, std::string_view file_path) {
    LdSoConf conf;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        std::string_view line = text.substr(start, end - start);
        start = end + 1;
        line = line.substr(0, line.find('#'));
        while (!line.empty() && is_space(line.front())) {
            line.remove_prefix(1);
        }
        if (line.empty()) {
            continue;
        }
        if (starts_with_keyword(line, "include", false)) {
            add_includes(line.substr(8), file_path, conf);
        } else if (starts_with_keyword(line, "hwcap", true)) {
            continue; // ldconfig ignores hwcap lines
        } else if (auto dir = clean_dir(line); !dir.empty()) {
            conf.dirs.push_back(std::move(dir));
        }
    }
    return conf;
}

} // namespace sjail
