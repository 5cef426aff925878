// SPDX-License-Identifier: Apache-2.0
// job_container/slurm_jail: Slurm's job_container interface for slurm-jail.
//
// slurmd and slurmstepd call it where no SPANK callback reaches: when a job
// starts on a node (container_p_create, with nothing to do: the job's first
// step makes its namespaces), in the children they fork for a job
// (container_p_join: tasks, task prolog and epilog scripts, file broadcasts
// with sbcast, UnkillableStepProgram), for pam_slurm_adopt
// (container_p_join_external), when the job ends (container_p_delete) and
// when slurmd starts (container_p_restore). All the work is done by
// chroot.so, which Slurm has already loaded into the same process through
// plugstack.conf: one implementation, one configuration (the chroot.so line),
// one state layout. This file only forwards, through the one table chroot.so
// exports (sjail/abi/job_container_table.h).
//
// Needs, in slurm.conf: JobContainerType=job_container/slurm_jail, and
// chroot.so in plugstack.conf.
extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>
#include <slurm/spank.h> // slurm_error
}

#include "sjail/abi/job_container_table.h"
#include "sjail/sys/dead_end.hpp"

#include <atomic>
#include <cstdint>
#include <dlfcn.h>
#include <sys/types.h>

extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_version;
const char plugin_name[] = "slurm-jail job container";
const char plugin_type[] = "job_container/slurm_jail";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

using Table = sjail_job_container_calls;

// chroot.so's table, checked once per process; null (after logging why) when
// chroot.so is not loaded or comes from another build.
const Table *chroot_so() {
    static std::atomic<const Table *> checked{nullptr};
    if (const Table *table = checked.load(); table != nullptr) {
        return table;
    }
    void *handle = ::dlopen("chroot.so", RTLD_LAZY | RTLD_NOLOAD);
    void *symbol = handle == nullptr ? nullptr : ::dlsym(handle, SJAIL_JOB_CONTAINER_TABLE);
    if (symbol == nullptr) {
        slurm_error("job_container/slurm_jail: chroot.so is not loaded in this process; put it "
                    "in plugstack.conf (see chroot.so(8))");
        return nullptr;
    }
    const auto get = reinterpret_cast<decltype(&sjail_job_container_table)>(symbol);
    const Table *found = get();
    if (found->version != SJAIL_JOB_CONTAINER_TABLE_VERSION || found->size != sizeof(Table)) {
        slurm_error("job_container/slurm_jail: chroot.so comes from another build (its table is "
                    "version %u, %u bytes; this plugin needs version %u, %zu bytes); install "
                    "both plugins from the same slurm-jail build",
                    found->version, found->size, SJAIL_JOB_CONTAINER_TABLE_VERSION, sizeof(Table));
        return nullptr;
    }
    checked.store(found);
    return found;
}

} // namespace

extern "C" {

int init() {
    return SLURM_SUCCESS;
}

int fini() {
    return SLURM_SUCCESS;
}

// The job's namespaces are made by its first step, whose slurmstepd reads
// plugstack.conf afresh (slurmd's copy is as old as slurmd).
int container_p_create(uint32_t /*job_id*/, uid_t /*uid*/) {
    return chroot_so() == nullptr ? SLURM_ERROR : SLURM_SUCCESS;
}
// A failed join must not leave the child where it is: Slurm ignores the
// failure for job scripts. Calls for uid 0 are slurmd's and slurmstepd's own
// programs (the SPANK job prolog/epilog runner, UnkillableStepProgram), which
// run on the node: they are left where they are. (A root job's tasks are
// still jailed by chroot.so's SPANK callbacks.)
int container_p_join(uint32_t job_id, uid_t uid) {
    if (job_id == 0 || uid == 0) {
        return SLURM_SUCCESS;
    }
    const Table *chroot = chroot_so();
    if (chroot == nullptr) {
        (void)sjail::enter_dead_end(nullptr, nullptr);
        return SLURM_ERROR;
    }
    return chroot->join(job_id) == 0 ? SLURM_SUCCESS : SLURM_ERROR;
}

int container_p_join_external(uint32_t job_id) {
    const Table *chroot = chroot_so();
    return chroot == nullptr ? -1 : chroot->join_external(job_id);
}

int container_p_add_cont(uint32_t /*job_id*/, uint64_t /*cont_id*/) {
    return SLURM_SUCCESS;
}

int container_p_delete(uint32_t job_id) {
    const Table *chroot = chroot_so();
    return chroot != nullptr && chroot->remove(job_id) == 0 ? SLURM_SUCCESS : SLURM_ERROR;
}

// chroot.so's own slurmd start also deletes what crashed jobs left.
int container_p_restore(char * /*dir_name*/, bool /*recover*/) {
    const Table *chroot = chroot_so();
    return chroot == nullptr || chroot->restore() == 0 ? SLURM_SUCCESS : SLURM_ERROR;
}

void container_p_reconfig() {}

// The extern step's slurmstepd enters the job through chroot.so's SPANK
// callbacks, like every step.
int container_p_stepd_create(uint32_t /*job_id*/, uid_t /*uid*/) {
    return SLURM_SUCCESS;
}

int container_p_stepd_delete(uint32_t /*job_id*/) {
    return SLURM_SUCCESS;
}

} // extern "C"
