// SPDX-License-Identifier: Apache-2.0
// What every health program does around its own work: its --config option,
// put the config file's [section] in front of the command line, parse, run,
// and turn errors into a "<program>: error: ..." line and exit code 2.
#pragma once

#include "config_file.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/core.h>
#include <functional>
#include <stdexcept>
#include <string>

namespace sjh {

// An option given once per value and kept every time (--env A --env B).
inline CLI::Option *repeatable(CLI::Option *option) {
    return option->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->expected(1)
        ->allow_extra_args(false);
}

// --config, naming the program's [section]. Every option is then taken once,
// the last time it is given, so that the command line wins over the config
// file's keys, which parse_and_run puts in front of it.
inline void add_config_option(CLI::App &app, std::string &config, const char *section) {
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    const auto help =
        fmt::format("Config file; its [{}] section holds defaults for these options", section);
    app.add_option("--config", config, help)->capture_default_str();
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
