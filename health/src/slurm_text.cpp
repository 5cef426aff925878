// SPDX-License-Identifier: Apache-2.0
#include "slurm_text.hpp"

#include "text.hpp"

#include <fmt/format.h>
#include <regex>
#include <set>
#include <stdexcept>

namespace sjh {

std::string scontrol_value(std::string_view text, const std::string &key) {
    // key=value, where key starts a line (after spaces) or follows a space.
    const std::regex re("(?:^|\\s)" + key + "=(\\S*)");
    const std::string s(text);
    std::smatch m;
    return std::regex_search(s, m, re) ? m.str(1) : std::string();
}

NodeState parse_scontrol_node(std::string_view text) {
    NodeState n;
    n.name = scontrol_value(text, "NodeName");
    n.state = scontrol_value(text, "State");
    if (n.name.empty() || n.state.empty()) {
        throw std::runtime_error("scontrol printed no NodeName=/State= (unexpected output: '" +
                                 std::string(text.substr(0, 200)) + "')");
    }
    // Reason runs to the end of its line and ends with " [user@time]".
    static const std::regex reason(R"((?:^|\s)Reason=(.*?)(?:\s+\[[^\]]*@[^\]]*\])?\s*$)",
                                   std::regex::multiline);
    const std::string s(text);
    std::smatch m;
    if (std::regex_search(s, m, reason)) {
        n.reason = m.str(1);
    }
    if (n.reason == "(null)") {
        n.reason.clear();
    }
    return n;
}

std::string parse_scontrol_gres(std::string_view text) {
    auto g = scontrol_value(text, "Gres");
    return g == "(null)" ? std::string() : g;
}

std::vector<NodeState> parse_sinfo_nodes(std::string_view text) {
    std::vector<NodeState> out;
    std::set<std::string> seen;
    for (const auto line : lines(text)) {
        const auto bar = line.find('|');
        if (bar == std::string_view::npos) {
            continue;
        }
        NodeState n;
        n.name = std::string(line.substr(0, bar));
        n.state = std::string(line.substr(bar + 1));
        while (!n.state.empty() && (n.state.back() == ' ' || n.state.back() == '\r')) {
            n.state.pop_back();
        }
        if (!n.name.empty() && seen.insert(n.name).second) {
            out.push_back(std::move(n));
        }
    }
    return out;
}

bool eligible_for_nccl(std::string_view state, bool held) {
    if (state.empty() || state.find_first_of("*~#!%@^") != std::string_view::npos) {
        return false; // not responding, powered down/up, rebooting, ...
    }
    static const std::set<std::string_view> ok = {"idle", "mixed", "allocated", "completing"};
    return ok.contains(state) || (held && (state == "maint" || state == "reserved"));
}

std::string shell_quote(std::string_view word) {
    std::string out = "'";
    for (const char c : word) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    out += "'";
    return out;
}

std::string explain_slurm_failure(const std::string &tool, const std::string &stderr_text,
                                  int exit_code) {
    std::string detail = stderr_text;
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' ')) {
        detail.pop_back();
    }
    if (detail.find("Unable to contact slurm controller") != std::string::npos ||
        detail.find("Connection refused") != std::string::npos ||
        detail.find("Socket timed out") != std::string::npos) {
        return fmt::format("cannot reach slurmctld ({} says: {}); check that slurmctld runs and "
                           "that SlurmctldHost/SlurmctldPort in slurm.conf (or SLURM_CONF) "
                           "point at it; nothing was changed",
                           tool, detail);
    }
    if (detail.find("authentication") != std::string::npos ||
        detail.find("Munge") != std::string::npos) {
        return fmt::format("{} cannot authenticate to slurmctld ({}); check that munged runs "
                           "with the cluster's key; nothing was changed",
                           tool, detail);
    }
    return fmt::format("{} failed with exit code {}: {}", tool, exit_code,
                       detail.empty() ? "(no error output)" : detail);
}

} // namespace sjh
