// SPDX-License-Identifier: Apache-2.0
#include "child_env.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace sjh {
namespace {

std::string_view name_of(std::string_view entry) {
    return entry.substr(0, entry.find('='));
}

void put(std::vector<std::string> &env, const std::string &entry) {
    const auto name = name_of(entry);
    const auto same = [name](const std::string &e) { return name_of(e) == name; };
    env.erase(std::remove_if(env.begin(), env.end(), same), env.end());
    env.push_back(entry);
}

} // namespace

std::vector<std::string> child_environment(const std::vector<std::string> &current,
                                           const std::vector<std::string> &keep,
                                           const std::vector<std::string> &extra) {
    std::vector<std::string> env{std::string("PATH=") + kSafePath};
    for (const auto &entry : current) {
        const auto name = name_of(entry);
        if (entry.find('=') != std::string::npos && name != "PATH" &&
            std::find(keep.begin(), keep.end(), name) != keep.end()) {
            put(env, entry);
        }
    }
    for (const auto &entry : extra) {
        const auto eq = entry.find('=');
        if (eq == std::string::npos || eq == 0) {
            throw std::invalid_argument(
                fmt::format("bad environment entry '{}': write KEY=VALUE", entry));
        }
        put(env, entry);
    }
    return env;
}

} // namespace sjh
