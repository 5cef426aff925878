// SPDX-License-Identifier: Apache-2.0
#include "node_action.hpp"

#include "failure_count.hpp"
#include "failure_state_file.hpp"
#include "trusted_files.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace sjh {

Action act_on_outcome(const SlurmClient &slurm, const ActionSettings &s, const std::string &check,
                      bool passed, const std::string &cause, std::FILE *out) {
    const auto dir = std::filesystem::path(s.state_file).parent_path().string();
    const unsigned previous =
        check_state_dir(dir.empty() ? "." : dir) ? read_failure_count(s.state_file, check) : 0;
    const NodeState node = slurm.show_node(s.node);
    CheckOutcome o;
    o.check = check;
    o.passed = passed;
    o.cause = cause;
    o.consecutive_failures = next_failure_count(previous, passed);
    o.drain_after = s.drain_after;
    Action a = decide(node, o);
    if (s.dry_run) {
        switch (a.kind) {
        case ActionKind::drain:
            fmt::print(
                out, "dry-run: would run: scontrol update nodename={} state=drain reason=\"{}\"\n",
                s.node, a.reason);
            break;
        case ActionKind::resume:
            fmt::print(out, "dry-run: would run: scontrol update nodename={} state=resume\n",
                       s.node);
            break;
        case ActionKind::none:
            break;
        }
        fmt::print(out, "dry-run: {}\n", a.why);
        return a;
    }
    make_state_dir(dir.empty() ? "." : dir);
    write_failure_count(s.state_file, check, o.consecutive_failures);
    if (a.kind == ActionKind::drain) {
        slurm.drain(s.node, a.reason);
    } else if (a.kind == ActionKind::resume) {
        slurm.resume(s.node);
    }
    fmt::print(out, "{}\n", a.why);
    return a;
}

} // namespace sjh
