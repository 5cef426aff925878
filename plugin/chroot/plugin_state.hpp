// SPDX-License-Identifier: Apache-2.0
// chroot.so's state within one Slurm process, shared by its callbacks: the
// settings of the plugstack.conf line, where the step stands, and the ways
// out of a step that must not go on.
#pragma once

extern "C" {
#include <slurm/spank.h>
}

#include "sjail/core/config.hpp"
#include "sjail/core/job/step_state.hpp"
#include "sjail/core/status.hpp"
#include "sjail/sys/job/step_entry.hpp"
#include "sjail/sys/node/node_watch.hpp"

#include <string>
#include <sys/types.h>
#include <vector>

namespace chroot_plugin {

struct PluginState {
    sjail::Config config;
    sjail::Status config_status;
    bool no_jail_requested = false; // --no-jail, by option or environment
    sjail::StepState state;         // where the step stands (step_state.hpp)
    sjail::StepJail step;           // the job's tasks view, for tasks and job scripts
    std::string step_name = "step";
    spank_context_t context = S_CTX_ERROR;
    const char *munge_dir = "/run/munge"; // for the dead end (no allocation there)
    // The slurmd spool, for the dead end too.
    const char *spool_dir = "/var/spool/slurmd";
    sjail::NodeWatch node_watch; // slurmd: its queues, for its life (node_watch.hpp)
};

// The one state of this process (a Slurm process loads the plugin once).
extern PluginState plugin;

// A callback's arguments as strings.
std::vector<std::string> args_of(int ac, char **av);

// Parses the plugstack.conf line's arguments into plugin.config (and
// plugin.config_status), and takes the dead end's munge and spool
// directories from them when they are usable.
void load_settings(int ac, char **av);

// Whether allow_opt_out= lets `uid` run on the node's own root. The user's
// name is looked up on the node's own files.
bool opt_out_allowed(uid_t uid);

// The thread leaves every view of the node (dead_end.hpp). If even that is
// impossible, the step must not go on: slurmstepd is stopped.
void leave_for_dead_end() noexcept;

// The step ran out of memory while it was prepared: no task runs, and the
// thread goes to the dead end. Allocation-free.
void fail_out_of_memory() noexcept;

// The one line a refused task is reported with.
void report_task_refused();

} // namespace chroot_plugin
