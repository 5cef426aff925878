// SPDX-License-Identifier: Apache-2.0
#include "node_action.hpp"

#include "failure_count.hpp"
#include "failure_state_file.hpp"
#include "gate_file.hpp"
#include "trusted_files.hpp"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>

namespace sjh {
namespace {

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The gate as it will be after this run: its records, with this run's pass.
GateView gate_after(const GateSettings &gate, const std::string &node, const std::string &check,
                    bool passed) {
    auto records = read_gate_records(gate.dir, node);
    if (passed) {
        (check == "gpu" ? records.gpu : records.nccl) = GatePass{gate.identity, unix_now()};
    }
    return view_gate(gate.identity, records);
}

} // namespace

Action act_on_outcome(const SlurmClient &slurm, const ActionSettings &s, const std::string &check,
                      bool passed, const std::string &cause, std::FILE *out,
                      const std::optional<GateSettings> &gate) {
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
    if (gate) {
        a = apply_gate(node, a, gate_after(*gate, s.node, check, passed));
    }
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
    if (gate && passed) {
        write_gate_pass(gate->dir, s.node, check, GatePass{gate->identity, unix_now()});
    }
    if (a.kind == ActionKind::drain) {
        slurm.drain(s.node, a.reason);
    } else if (a.kind == ActionKind::resume) {
        slurm.resume(s.node);
    }
    fmt::print(out, "{}\n", a.why);
    return a;
}

} // namespace sjh
