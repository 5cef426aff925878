// SPDX-License-Identifier: Apache-2.0
// chroot.so for job_container/slurm_jail (namespace/slurm_jail from Slurm
// 25.11; plugin/job_container), which Slurm loads beside it: the one table
// that plugin reaches the jobs through (sjail/abi/job_container_table.h).
// Joining a job from slurmd (a file broadcast, a script before any step) or
// from slurmstepd (a task epilog), deleting it, and deleting what crashed
// jobs left.
#include "sjail/abi/job_container_table.h"

#include "plugin_state.hpp"
#include "slurmd.hpp"

#include "sjail/sys/job/job_namespace.hpp"
#include "sjail/sys/node/jail_generation.hpp"
#include "sjail/sys/node/node_namespace.hpp"

#include <cstdint>

namespace chroot_plugin {
namespace {

using sjail::Status;

// In a child of slurmd: into the job's tasks view. slurmd read
// plugstack.conf when it started: its settings may be older than the
// steps'. A job's namespaces made by its first step are joined as they
// are; slurmd makes them only for a request that comes before any step.
Status join_from_slurmd(std::uint32_t job) {
    sjail::JobNamespace job_ns;
    sjail::FileId jail;
    if (!sjail::open_existing_job_namespace(plugin.config.state_dir, job, job_ns)) {
        sjail::NodeNamespace node;
        if (Status s = sjail::acquire_node_namespace(plugin.config, node); !s.ok()) {
            return s;
        }
        if (Status s = sjail::open_job_namespace(plugin.config, node, job, job_ns); !s.ok()) {
            return s;
        }
        jail = job_ns.jail.value_or(node.jail);
    } else if (job_ns.jail) {
        jail = *job_ns.jail; // the jail the job began on
    } else {
        sjail::Config config; // a job made before its jail was recorded
        if (Status s = sjail::resolve_live_jail(plugin.config, config); !s.ok()) {
            return s;
        }
        sjail::JailFilesystem filesystem(config);
        sjail::Fd root;
        if (Status s = sjail::find_jail(config, filesystem, jail, root); !s.ok()) {
            return s;
        }
    }
    if (Status s = sjail::enter_namespace(job_ns.tasks.get()); !s.ok()) {
        return s;
    }
    if (Status s = sjail::enter_job_ipc(job_ns.ipc); !s.ok()) {
        return s;
    }
    return sjail::verify_root(jail);
}

// In a child of slurmd or slurmstepd: into the job's tasks view, or, when
// that fails, into the dead end (Slurm ignores a failed join for scripts).
int join(std::uint32_t job) {
    if (!plugin.config_status.ok()) {
        slurm_error("chroot: job %u: %s", job, plugin.config_status.message().c_str());
        leave_for_dead_end();
        return -1;
    }
    Status s;
    if (plugin.context == S_CTX_REMOTE) {
        switch (plugin.state.for_task()) {
        case sjail::TaskVerdict::RunWhereItIs:
            return 0; // an allowed --no-jail step: its scripts run where it runs
        case sjail::TaskVerdict::Refuse:
            // The same line the task refusal gives: slurmstepd joins the
            // job's container in each task before SPANK's task callbacks.
            report_task_refused();
            leave_for_dead_end();
            return -1;
        case sjail::TaskVerdict::EnterJail:
            break;
        }
        s = sjail::enter_tasks_view(plugin.step, sjail::PidCheck::RebirthIfNeeded);
    } else {
        s = join_from_slurmd(job);
    }
    if (!s.ok()) {
        slurm_error("chroot: job %u: joining the job's view failed: %s", job, s.message().c_str());
        leave_for_dead_end();
        return -1;
    }
    return 0;
}

int jc_join(std::uint32_t job) {
    try {
        return join(job);
    } catch (...) {
        fail_out_of_memory();
        return -1;
    }
}

// An fd of the job's tasks view for pam_slurm_adopt (slurmstepd of the
// extern step); the same fd every time, as slurmstepd does not close it.
int jc_join_external(std::uint32_t /*job*/) {
    return plugin.state.in_jail() ? plugin.step.tasks.get() : -1;
}

int jc_remove(std::uint32_t job) {
    try {
        return plugin.config_status.ok() ? delete_job(job) : -1;
    } catch (...) {
        slurm_error("chroot: job %u: out of memory deleting its namespaces", job);
        return -1;
    }
}

int jc_restore() {
    try {
        if (plugin.config_status.ok()) {
            delete_stale_jobs();
        }
        return 0;
    } catch (...) {
        return -1;
    }
}

constexpr sjail_job_container_calls kJobContainerTable = {
    SJAIL_JOB_CONTAINER_TABLE_VERSION,
    sizeof(sjail_job_container_calls),
    jc_join,
    jc_join_external,
    jc_remove,
    jc_restore,
};

} // namespace
} // namespace chroot_plugin

extern "C" __attribute__((visibility("default"))) const sjail_job_container_calls *
sjail_job_container_table() {
    return &chroot_plugin::kJobContainerTable;
}
