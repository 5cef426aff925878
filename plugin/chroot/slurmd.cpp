// SPDX-License-Identifier: Apache-2.0
#include "slurmd.hpp"

#include "plugin_state.hpp"

#include "sjail/sys/child_process.hpp"
#include "sjail/sys/job/job_namespace.hpp"
#include "sjail/sys/node/generation_holds.hpp"
#include "sjail/sys/node/node_namespace.hpp"

#include <string>

namespace chroot_plugin {

using sjail::Status;

namespace {

// The builder inside the detached grandchild has its own deadline.
void prebuild_in_background() {
    const bool started = sjail::run_detached([] {
        try {
            sjail::NodeNamespace node;
            if (Status s = sjail::acquire_node_namespace(plugin.config, node); !s.ok()) {
                slurm_error("chroot: cannot prepare the jail namespace, jobs will fail "
                            "until fixed: %s",
                            s.message().c_str());
            } else {
                slurm_info("chroot: jail namespace ready for %s", plugin.config.jail.c_str());
            }
        } catch (...) {
            slurm_error("chroot: preparing the jail namespace ran out of memory");
        }
    });
    if (!started) {
        slurm_info("chroot: the jail namespace is built by the first step (cannot fork now)");
    }
}

// slurmd's queues of changes to what steps check, so that a step joins
// without checking every bind source again while nothing changed.
void watch_node() {
    if (Status s = plugin.node_watch.start(plugin.config); !s.ok()) {
        slurm_info("chroot: every step checks the node's bind sources in full (no node watch: "
                   "%s)",
                   s.message().c_str());
    } else {
        slurm_info("chroot: watching the node's bind sources and mounts for its steps");
    }
}

} // namespace

void start_in_slurmd() {
    delete_stale_jobs();
    watch_node();
    prebuild_in_background();
}

void stop_in_slurmd() {
    if (!plugin.config_status.ok()) {
        return;
    }
    plugin.node_watch.stop(plugin.config);
    if (Status s = sjail::release_node_namespace(plugin.config); !s.ok()) {
        slurm_error("chroot: %s", s.message().c_str());
    }
}

void delete_stale_jobs() {
    for (const auto job : sjail::delete_stale_jobs(plugin.config)) {
        slurm_info("chroot: deleted the namespaces of job %u, which has nothing left on this node",
                   job);
    }
    record_generation_holds();
}

void record_generation_holds() {
    // A generation the record names and no job here holds any more is kept
    // by populate-jail --prune until the next record; nothing else fails.
    if (Status s = sjail::record_generation_holds(plugin.config); !s.ok()) {
        slurm_error("chroot: %s (retried when the next job on this node ends)",
                    s.message().c_str());
    }
}

int delete_job(std::uint32_t job) {
    std::string left_behind;
    if (Status s = sjail::delete_job_namespace(plugin.config, job, &left_behind); !s.ok()) {
        slurm_error("chroot: job %u: deleting its namespaces: %s", job, s.message().c_str());
        return -1;
    }
    record_generation_holds();
    if (!left_behind.empty()) {
        slurm_info("chroot: job %u: its job_tmp= directory is left for the next cleanup "
                   "(slurmd's start): %s",
                   job, left_behind.c_str());
    }
    return 0;
}

int delete_job_at_epilog(spank_t sp, int ac, char **av) {
    // The line's settings are parsed here again: no process that runs this
    // callback has parsed them before. slurmd does not call it itself; it
    // runs the SPANK job epilog in a child it execs afresh, "slurmstepd
    // spank epilog" (Slurm's prep/script plugin, every release from 22.05
    // to 26.05), which loads plugstack.conf and chroot.so anew and calls
    // slurm_spank_job_epilog alone, without slurm_spank_init (Slurm's
    // spank_job_script). plugin.config holds the defaults there, and
    // deleting with them would miss a job_tmp= directory or a state=
    // directory elsewhere.
    load_settings(ac, av);
    if (!plugin.config_status.ok()) {
        slurm_error("chroot: job epilog: %s", plugin.config_status.message().c_str());
        return 0; // as every step of such a node failed, nothing was made
    }
    std::uint32_t job = 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS) {
        return 0;
    }
    return delete_job(job);
}

} // namespace chroot_plugin
