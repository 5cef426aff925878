// SPDX-License-Identifier: Apache-2.0
#include "plugin_state.hpp"

#include "sjail/core/parse_config.hpp"
#include "sjail/core/path_rules.hpp"
#include "sjail/sys/job/dead_end.hpp"

#include <csignal>
#include <pwd.h>
#include <unistd.h>

namespace chroot_plugin {

PluginState plugin;

std::vector<std::string> args_of(int ac, char **av) {
    std::vector<std::string> args;
    args.reserve(static_cast<std::size_t>(ac > 0 ? ac : 0));
    for (int i = 0; i < ac; ++i) {
        args.emplace_back(av[i]);
    }
    return args;
}

void load_settings(int ac, char **av) {
    auto parsed = sjail::parse_config(args_of(ac, av));
    plugin.config = parsed.config;
    plugin.config_status = parsed.status;
    if (sjail::check_absolute_path("munge", plugin.config.munge_dir).ok()) {
        plugin.munge_dir = plugin.config.munge_dir.c_str();
    }
    if (sjail::check_absolute_path("spool", plugin.config.spool_dir).ok()) {
        plugin.spool_dir = plugin.config.spool_dir.c_str();
    }
}

namespace {

// Looked up on the node's own files, before the thread enters the jail.
std::string user_name(uid_t uid) {
    struct passwd pw {};
    struct passwd *found = nullptr;
    std::vector<char> buf(4096);
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
        return found->pw_name;
    }
    return "";
}

} // namespace

bool opt_out_allowed(uid_t uid) {
    return sjail::opt_out_allowed(plugin.config, user_name(uid), uid);
}

void leave_for_dead_end() noexcept {
    if (!sjail::enter_dead_end(plugin.munge_dir, plugin.spool_dir)) {
        slurm_error("chroot: cannot leave the node's root for the dead end; stopping slurmstepd "
                    "so that nothing of the step runs on the host");
        ::kill(::getpid(), SIGKILL);
    }
}

void fail_out_of_memory() noexcept {
    plugin.state.ran_out_of_memory();
    slurm_error("chroot: out of memory while preparing the step; no task will run");
    leave_for_dead_end();
}

void report_task_refused() {
    slurm_error("chroot: %s", plugin.state.task_refusal(plugin.step_name).c_str());
}

} // namespace chroot_plugin
