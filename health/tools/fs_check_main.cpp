// SPDX-License-Identifier: Apache-2.0
// slurm-jail-fs-check: whether the shared jail's filesystem answers, asked as
// chroot.so's probe asks it; drains the node while it does not and resumes
// what it drained. See man/slurm-jail-fs-check.8.
#include "node_check.hpp"
#include "program_main.hpp"

#include "sjail/core/config.hpp"
#include "sjail/core/parse_config.hpp"
#include "sjail/sys/node/jail_probe.hpp"
#include "sjail/sys/safe_open.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace {

using namespace sjh;
using Clock = std::chrono::steady_clock;

struct Options : NodeActionOptions {
    std::string config = kDefaultConfig;
    std::string jail;
    int timeout_s = 10;
};

void add_options(CLI::App &app, Options &o) {
    add_config_option(app, o.config, "fs-check");
    app.add_option("--jail", o.jail, "The jail, as chroot.so's jail= names it")->required();
    app.add_option("--timeout", o.timeout_s,
                   "Seconds the jail's server has to answer (chroot.so: build_timeout=)")
        ->capture_default_str()
        ->check(CLI::Range(1, 50));
    add_node_action_options(app, o);
}

int run(Options &o) {
    const auto start = Clock::now();
    resolve_node_name(o, "slurmd sets SLURMD_NODENAME");
    check_node_action_paths(o);
    const auto parsed = sjail::parse_config(
        {"jail=" + o.jail, "build_timeout=" + std::to_string(o.timeout_s), "recheck=0"});
    if (!parsed.status.ok()) {
        throw std::invalid_argument("--jail " + o.jail + ": " + parsed.status.message());
    }
    sjail::JailFilesystem filesystem(parsed.config);
    sjail::Status answer = filesystem.probe(false);
    if (answer.ok()) {
        // The probe refreshed the jail root's attributes: chroot.so's own
        // check of them, which a jail a user owns or can write fails.
        sjail::Fd root;
        if (auto s = sjail::open_root_owned_dir(o.jail, root); !s.ok()) {
            answer = sjail::Status::failure("the jail's filesystem (" +
                                            sjail::name_jail_filesystem(o.jail) +
                                            ") cannot serve the jail: " + s.message());
        }
    }
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string where = sjail::name_jail_filesystem(o.jail);
    if (o.json) {
        fmt::print("{}\n", nlohmann::json{{"passed", answer.ok()},
                                          {"filesystem", where},
                                          {"seconds", took},
                                          {"cause", answer.ok() ? "" : answer.message()}}
                               .dump());
    } else if (answer.ok()) {
        fmt::print("ok: the jail's filesystem answered in {:.3f} s ({})\n", took, where);
    } else {
        fmt::print("FAIL: {}\n", answer.message());
    }
    (void)std::fflush(stdout);
    const int left = std::max(1, (o.timeout_s + 10 - static_cast<int>(took)) / 2);
    act_on_node(o, {"jail", "fs-check.failures", answer.ok(), answer.ok() ? "" : answer.message()},
                left);
    return answer.ok() ? 0 : 1;
}

int run_main(int argc, char **argv) {
    CLI::App app{"Shared jail filesystem check for Slurm's HealthCheckProgram: asks the jail's "
                 "server as chroot.so does, within a deadline, drains the node while it does not "
                 "answer and resumes the node when it answers again.",
                 "slurm-jail-fs-check"};
    Options o;
    add_options(app, o);
    return parse_and_run(app, argc, argv, "fs-check", [&] { return run(o); });
}

} // namespace

int main(int argc, char **argv) {
    return sjh::guarded_main([&] { return run_main(argc, argv); });
}
