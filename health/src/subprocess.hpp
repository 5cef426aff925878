// SPDX-License-Identifier: Apache-2.0
// Run a program with a deadline and capture its output (thin system layer).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace sjh {

struct CommandResult {
    bool started = false;   // false: exec failed, see exec_error
    std::string exec_error; // "No such file or directory"
    int exit_code = -1;
    int signal = 0;
    bool timed_out = false;
    std::string out; // stdout (and stderr when merged)
    std::string err;
};

struct CommandOptions {
    std::chrono::milliseconds timeout{60000};
    bool merge_stderr = false;
    std::vector<std::string> extra_env; // "KEY=VALUE", added to the inherited environment
    // When set, the child's whole environment ("KEY=VALUE" entries; see
    // child_env.hpp) instead of the inherited one plus extra_env, and argv[0]
    // is run as given, with no PATH lookup.
    std::optional<std::vector<std::string>> environment;
};

// Runs argv (PATH lookup for argv[0] unless opts.environment is set) in its
// own process group; on timeout the whole group gets SIGKILL. Never throws for
// the child's failures.
CommandResult run_command(const std::vector<std::string> &argv, const CommandOptions &opts);

// This process's environment as "KEY=VALUE" entries.
std::vector<std::string> current_environment();

} // namespace sjh
