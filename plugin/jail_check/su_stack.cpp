// SPDX-License-Identifier: Apache-2.0
#include "su_stack.hpp"

#include "sjail/core/path_rules.hpp"

#include <string>

namespace sjail::check {
namespace {

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
