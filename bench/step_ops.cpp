// SPDX-License-Identifier: Apache-2.0
// sjail-step-ops: what chroot.so does for a step before its tasks run
// (sjail::enter_node_jail: the stamp check, the jail filesystem's probe when
// it is due, joining the node's namespace), N times, each in a child forked
// for it, with the plugstack.conf settings given. Run it as root in a node's
// mount namespace (nsenter -t SLURMD_PID -m); count what the jail's server
// served meanwhile with the server's own counters (tests/shared-fs).
#include "sjail/core/config.hpp"
#include "sjail/core/parse_config.hpp"
#include "sjail/sys/job/step_entry.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

// One step's entry in a child; its error, if any, comes back on a pipe. It
// ends when the child does: what the child started (a probe stuck on the
// server) and left behind does not hold it.
std::string one_step(const sjail::Config &config) {
    int fds[2];
    if (::pipe(fds) != 0) {
        return "pipe failed";
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        const auto s = sjail::enter_node_jail(config);
        const std::string message = s.ok() ? "" : s.message();
        const ssize_t written = ::write(fds[1], message.data(), message.size());
        ::_exit(s.ok() && written >= 0 ? 0 : 1);
    }
    ::close(fds[1]);
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid) {
        ::close(fds[0]);
        return "fork or wait failed";
    }
    // Everything the child wrote is in the pipe by now; a probe child it left
    // (stuck on a hung server) closed its copy of the pipe first thing.
    (void)::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    std::string message;
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) {
        message.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return message.empty() ? "the step's child failed" : message;
    }
    return "";
}

int run(int argc, char **argv) {
    int steps = 10;
    int gap_ms = 0;
    std::vector<std::string> settings;
    CLI::App app{"sjail-step-ops: chroot.so's entry of a step, N times, on this node (root, in "
                 "the node's mount namespace); prints JSON"};
    app.add_option("--steps", steps, "how many steps")->capture_default_str();
    app.add_option("--gap-ms", gap_ms,
                   "milliseconds between steps (past the jail filesystem's cache timeouts)")
        ->capture_default_str();
    app.add_option("settings", settings, "chroot.so's plugstack.conf settings (jail=... ...)")
        ->required();
    CLI11_PARSE(app, argc, argv);
    const auto parsed = sjail::parse_config(settings);
    if (!parsed.status.ok()) {
        std::cerr << "sjail-step-ops: " << parsed.status.message() << "\n";
        return 2;
    }
    nlohmann::json errors = nlohmann::json::array();
    double longest_s = 0;
    for (int i = 0; i < steps; ++i) {
        if (i > 0 && gap_ms > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
        }
        const auto start = std::chrono::steady_clock::now();
        const std::string error = one_step(parsed.config);
        longest_s = std::max(
            longest_s,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (!error.empty()) {
            errors.push_back(error);
        }
    }
    std::cout << nlohmann::json{{"steps", steps},
                                {"failed", errors.size()},
                                {"longest_seconds", longest_s},
                                {"errors", errors}}
              << "\n";
    return errors.empty() ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception &e) {
        std::cerr << "sjail-step-ops: " << e.what() << "\n";
        return 2;
    }
}
