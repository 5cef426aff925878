// SPDX-License-Identifier: Apache-2.0
#include "su_stack.hpp"

#include "sjail/core/path_rules.hpp"

#include <vector>

namespace sjail::check {
namespace {

// The line's words (spaces and tabs), its comment left out.
std::vector<std::string_view> words_of(std::string_view line) {
    line = line.substr(0, line.find('#'));
    std::vector<std::string_view> words;
    std::size_t at = 0;
    while (at < line.size()) {
        const auto start = line.find_first_not_of(" \t", at);
        if (start == std::string_view::npos) {
            break;
        }
        const auto end = line.find_first_of(" \t", start);
        words.push_back(line.substr(start, end - start));
        at = end == std::string_view::npos ? line.size() : end;
    }
    return words;
}

bool names_the_module(std::string_view module) {
    constexpr std::string_view kModule = "pam_slurm_jail.so";
    return module == kModule || module.ends_with(std::string("/") + std::string(kModule));
}

} // namespace

bool su_enters_jail(std::string_view pam_text) {
    for (const auto line : split(pam_text, '\n')) {
        const auto words = words_of(line);
        if (words.size() >= 3 && words[0] == "session" &&
            (words[1] == "required" || words[1] == "requisite") && names_the_module(words[2])) {
            return true;
        }
    }
    return false;
}

} // namespace sjail::check
