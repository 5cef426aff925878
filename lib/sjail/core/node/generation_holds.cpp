// SPDX-License-Identifier: Apache-2.0
#include "sjail/core/node/generation_holds.hpp"

#include <algorithm>

namespace sjail {

std::string holds_dir(const std::string &state_dir) {
    return state_dir + "/held";
}

std::string node_hold_path(const std::string &state_dir) {
    return holds_dir(state_dir) + "/node";
}

std::string job_hold_path(const std::string &state_dir, std::uint32_t job) {
    return holds_dir(state_dir) + "/job." + std::to_string(job);
}

std::string format_node_holds(const std::set<std::uint64_t> &generations) {
    std::string text = "# slurm-jail: the generations this node holds (written by chroot.so; "
                       "do not edit)\n";
    for (const auto generation : generations) {
        text += "generation=" + std::to_string(generation) + "\n";
    }
    return text;
}

bool valid_node_record_name(std::string_view name) {
    const auto allowed = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
    };
    return !name.empty() && name.size() <= 64 && !name.starts_with('.') &&
           std::all_of(name.begin(), name.end(), allowed);
}

} // namespace sjail
