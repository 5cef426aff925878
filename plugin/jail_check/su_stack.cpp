// SPDX-License-Identifier: Apache-2.0
#include "su_stack.hpp"

#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace sjail::check {
namespace {

// Modules that start processes of the user's, or run programs, when the
// session opens: before pam_slurm_jail.so they do it on the node's own root.
struct StartsProcesses {
    std::string_view module;
    std::string_view what;
};
constexpr std::array<StartsProcesses, 3> kStartsProcesses{{
    {"pam_systemd.so", "it starts the user's systemd --user, with the user's own unit files, on "
                       "the node's own root"},
    {"pam_exec.so", "it runs a program on the node's own root"},
    {"pam_script.so", "it runs scripts on the node's own root"},
}};

bool enters_jail(const PamModuleLine &line) {
    return names_module(line.module, "pam_slurm_jail.so") &&
           (line.control == "required" || line.control == "requisite");
}

// Where the jail's line is, seen from each stack around it: stack -> its
// position there (the line's own, or that of the substack holding it).
std::vector<std::pair<std::size_t, std::size_t>> places_of(const PamModuleLine &jail,
                                                           const PamSessionStack &stack) {
    std::vector<std::pair<std::size_t, std::size_t>> places{{jail.stack, jail.position}};
    for (std::size_t s = jail.stack; s != 0 && s <= stack.substacks.size();) {
        const PamSubstack &sub = stack.substacks[s - 1];
        places.emplace_back(sub.parent, sub.position);
        s = sub.parent;
    }
    return places;
}

std::optional<std::size_t>
place_in(std::size_t stack, const std::vector<std::pair<std::size_t, std::size_t>> &places) {
    for (const auto &[s, position] : places) {
        if (s == stack) {
            return position;
        }
    }
    return std::nullopt;
}

std::string named(const PamModuleLine &line) {
    return "'" + line.text + "' (" + line.where + ")";
}

// Why `line`, before the jail's line, defeats it; "" when it does not.
std::string defeats(const PamModuleLine &line,
                    const std::vector<std::pair<std::size_t, std::size_t>> &places) {
    for (const auto &starts : kStartsProcesses) {
        if (names_module(line.module, std::string(starts.module))) {
            return named(line) + " runs before pam_slurm_jail.so: " + std::string(starts.what);
        }
    }
    const auto jail_at = place_in(line.stack, places);
    if (!jail_at || line.position >= *jail_at) {
        return ""; // in a substack that ends before the jail's line, or after it
    }
    if (line.ends_stack) {
        return named(line) + " can end su's session stack before pam_slurm_jail.so: su then runs "
                             "the user's ~/.bash_profile on the node's own root";
    }
    if (line.jump > 0 && line.position + line.jump >= *jail_at) {
        return named(line) + " can jump over pam_slurm_jail.so: su then runs the user's "
                             "~/.bash_profile on the node's own root";
    }
    return "";
}

} // namespace

SuStackVerdict judge_su_stack(const PamSessionStack &stack) {
    SuStackVerdict verdict;
    std::size_t jail = 0;
    while (jail < stack.lines.size() && !enters_jail(stack.lines[jail])) {
        ++jail;
    }
    if (jail == stack.lines.size()) {
        return verdict;
    }
    verdict.enters_jail = true;
    const auto places = places_of(stack.lines[jail], stack);
    for (std::size_t i = 0; i < jail; ++i) {
        if (auto why = defeats(stack.lines[i], places); !why.empty()) {
            verdict.before_jail.push_back(std::move(why));
        }
    }
    return verdict;
}

} // namespace sjail::check
