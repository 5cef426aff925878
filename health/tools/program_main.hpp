// What every health program does around its own work: put the config file's
// [section] in front of the command line, parse, run, and turn errors into a
// "<program>: error: ..." line and exit code 2.
#pragma once

#include "cli_config.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/core.h>
#include <functional>
#include <stdexcept>
#include <string>

namespace sjh {

// Options of the checks that drain and resume their own node.
struct NodeActionOptions {
    unsigned drain_after = 1;
    std::string state_dir = "/var/lib/slurm-jail/health";
    std::string scontrol = "scontrol";
    bool json = false;
    bool no_drain = false;
    bool dry_run = false;
};

inline void add_node_action_options(CLI::App &app, NodeActionOptions &o) {
    app.add_option("--drain-after", o.drain_after, "Drain after this many failures in a row")
        ->capture_default_str()
        ->check(CLI::Range(1U, 1000U));
    app.add_option("--state-dir", o.state_dir, "Where the failure counter is kept")
        ->capture_default_str();
    app.add_option("--scontrol", o.scontrol, "scontrol to use")->capture_default_str();
    app.add_flag("--json", o.json, "Print the result as JSON");
    app.add_flag("--no-drain", o.no_drain, "Only report; never talk to Slurm");
    app.add_flag("--dry-run", o.dry_run, "Print the drain/resume it would do, change nothing");
}

inline int parse_and_run(CLI::App &app, int argc, char **argv, const char *section,
                         const std::function<int()> &run) {
    try {
        app.parse(args_with_config(argc, argv, section));
    } catch (const CLI::ParseError &e) {
        return app.exit(e);
    } catch (const std::invalid_argument &e) {
        fmt::print(stderr, "{}: error: {}\n", app.get_name(), e.what());
        return 2;
    }
    try {
        return run();
    } catch (const std::exception &e) {
        fmt::print(stderr, "{}: error: {}\n", app.get_name(), e.what());
        return 2;
    }
}

// For main(): nothing escapes; anything unexpected exits 2.
inline int guarded_main(const std::function<int()> &body) noexcept {
    try {
        return body();
    } catch (const std::exception &e) {
        (void)std::fputs(e.what(), stderr);
        (void)std::fputs("\n", stderr);
    } catch (...) {
        (void)std::fputs("unexpected error\n", stderr);
    }
    return 2;
}

} // namespace sjh
