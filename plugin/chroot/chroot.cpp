// SPDX-License-Identifier: Apache-2.0
// chroot.so: the SPANK dispatcher. Each callback hands its work to the file
// of the Slurm process it runs in, and no exception leaves a callback.
//
//   slurmd       init: delete what crashed jobs left, start the node watch,
//                build the node's jail namespace early, in the background;
//                slurmd_exit: drop both (slurmd.cpp).
//   srun/sbatch  init: refuse a broken plugstack line; register --no-jail;
//   salloc       init_post_opt: refuse it (as option or environment
//                variable) for users the admin did not allow (client.cpp).
//   slurmstepd   init_post_opt: the step's thread into the job's tasks view
//                of the jail, or the dead end; user_init .. first
//                task_post_fork: the window in which the tasks are born in
//                the job's PID namespace; task_init_privileged: each task
//                into the tasks' view, or refused (slurmstepd.cpp).
//   job epilog   job_epilog: the job ended on the node: delete its
//                namespaces, with the settings passed to this call
//                (slurmd.cpp).
//   job_container/slurm_jail (Slurm 22.05 to 25.05) and
//   namespace/slurm_jail (Slurm 25.11 and later), both in plugin/job_container,
//                reach the jobs through the one table this plugin exports
//                for them (job_container_table.cpp).
// What the callbacks share within one process: plugin_state.hpp.
extern "C" {
#include <slurm/spank.h>
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
SPANK_PLUGIN(chroot, 1)
}

#include "client.hpp"
#include "plugin_state.hpp"
#include "slurmd.hpp"
#include "slurmstepd.hpp"

using chroot_plugin::plugin;

namespace {

int init(spank_t sp, int ac, char **av) {
    chroot_plugin::load_settings(ac, av);
    const spank_context_t ctx = spank_context();
    plugin.context = ctx;
    const bool client = ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR;
    if (client || ctx == S_CTX_REMOTE) {
        chroot_plugin::register_no_jail_option(sp);
    }
    if (!plugin.config_status.ok()) {
        slurm_error("chroot: %s", plugin.config_status.message().c_str());
        // srun/sbatch refuse at once; slurmstepd fails the step (init_post_opt).
        return client ? -1 : 0;
    }
    if (ctx == S_CTX_SLURMD) {
        chroot_plugin::start_in_slurmd();
    }
    return 0;
}

} // namespace

extern "C" {

int slurm_spank_init(spank_t sp, int ac, char **av) {
    try {
        return init(sp, ac, av);
    } catch (...) {
        slurm_error("chroot: init failed: out of memory");
        return -1;
    }
}

int slurm_spank_init_post_opt(spank_t sp, int /*ac*/, char ** /*av*/) {
    try {
        if (spank_remote(sp) == 1) {
            chroot_plugin::prepare_step(sp); // a failure leaves the thread in the dead end
            return 0;
        }
        return chroot_plugin::check_client_opt_out();
    } catch (...) {
        if (spank_remote(sp) == 1) {
            chroot_plugin::fail_out_of_memory();
        }
        return -1;
    }
}

int slurm_spank_user_init(spank_t /*sp*/, int /*ac*/, char ** /*av*/) {
    try {
        return chroot_plugin::open_fork_window();
    } catch (...) {
        return -1;
    }
}

int slurm_spank_task_post_fork(spank_t /*sp*/, int /*ac*/, char ** /*av*/) {
    chroot_plugin::close_fork_window();
    return 0;
}

int slurm_spank_exit(spank_t /*sp*/, int /*ac*/, char ** /*av*/) {
    chroot_plugin::end_step();
    return 0;
}

int slurm_spank_task_init_privileged(spank_t /*sp*/, int /*ac*/, char ** /*av*/) {
    try {
        return chroot_plugin::enter_task();
    } catch (...) {
        slurm_error("chroot: task not started: out of memory");
        return -1;
    }
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av) {
    try {
        return chroot_plugin::delete_job_at_epilog(sp, ac, av);
    } catch (...) {
        slurm_error("chroot: job epilog ran out of memory");
        return -1;
    }
}

int slurm_spank_slurmd_exit(spank_t /*sp*/, int /*ac*/, char ** /*av*/) {
    try {
        chroot_plugin::stop_in_slurmd();
    } catch (...) {
        slurm_error("chroot: releasing the jail namespace ran out of memory");
    }
    return 0;
}

} // extern "C"
