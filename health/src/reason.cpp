// SPDX-License-Identifier: Apache-2.0
#include "reason.hpp"

#include "text.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace sjh {
namespace {

bool has_flag(std::string_view state, std::string_view flag) {
    // State is BASE[+FLAG...], maybe with a trailing '*' (not responding) or '~'.
    for (auto part : split(state, '+')) {
        while (!part.empty() &&
               std::string_view("*~#!%$@^-").find(part.back()) != std::string_view::npos) {
            part.remove_suffix(1);
        }
        if (part == flag) {
            return true;
        }
    }
    return false;
}

} // namespace

std::string make_reason(std::string_view check, std::string_view cause) {
    std::string r = fmt::format("{} {}: {}", kReasonPrefix, check, cause);
    std::replace_if(
        r.begin(), r.end(), [](char c) { return c == '\n' || c == '\r' || c == '"'; }, ' ');
    if (r.size() > kMaxReason) {
        r.resize(kMaxReason - 3);
        r += "...";
    }
    return r;
}

bool is_our_reason(std::string_view reason) {
    return reason.starts_with(kReasonPrefix);
}

bool is_reason_of_check(std::string_view reason, std::string_view check) {
    return reason.starts_with(fmt::format("{} {}:", kReasonPrefix, check));
}

bool NodeState::drained() const {
    return has_flag(state, "DRAIN") || has_flag(state, "DRAINED") || has_flag(state, "DRAINING");
}

bool NodeState::down() const {
    return has_flag(state, "DOWN");
}

Action decide(const NodeState &node, const CheckOutcome &o) {
    Action a;
    if (o.passed) {
        if (!node.drained()) {
            a.why = fmt::format("{}: check passed; node is not drained", node.name);
        } else if (is_reason_of_check(node.reason, o.check)) {
            a.kind = ActionKind::resume;
            a.why = fmt::format("{}: check passed; resuming (drained by us: '{}')", node.name,
                                node.reason);
        } else {
            a.why = fmt::format("{}: check passed, but the node was drained by someone else "
                                "('{}'); leaving it drained",
                                node.name, node.reason);
        }
        return a;
    }
    if (o.consecutive_failures < o.drain_after) {
        a.why = fmt::format("{}: check failed ({} of {} consecutive failures before draining): {}",
                            node.name, o.consecutive_failures, o.drain_after, o.cause);
    } else if (node.drained() && is_our_reason(node.reason)) {
        a.why =
            fmt::format("{}: check failed; already drained by us ('{}')", node.name, node.reason);
    } else if (node.drained()) {
        a.why = fmt::format("{}: check failed; node already drained by someone else ('{}'); "
                            "not changing its reason",
                            node.name, node.reason);
    } else {
        a.kind = ActionKind::drain;
        a.reason = make_reason(o.check, o.cause);
        a.why = fmt::format("{}: check failed; draining: {}", node.name, a.reason);
    }
    return a;
}

} // namespace sjh
