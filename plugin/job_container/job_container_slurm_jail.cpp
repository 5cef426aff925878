// SPDX-License-Identifier: Apache-2.0
// job_container/slurm_jail: Slurm's job_container interface (Slurm 22.05 to
// 25.05) for slurm-jail; the work is chroot.so's (forward.hpp).
//
// slurmd and slurmstepd call it where no SPANK callback reaches: in the
// children they fork for a job (container_p_join: tasks, task prolog and
// epilog scripts, file broadcasts with sbcast, UnkillableStepProgram), for
// pam_slurm_adopt (container_p_join_external), when slurmd starts
// (container_p_restore) and, up to 23.11, when a job starts on a node
// (container_p_create, with nothing to do: the job's first step makes its
// namespaces) and ends there (container_p_delete). From 24.05 nothing calls
// at the job's end; chroot.so's job epilog deletes its namespaces on every
// release.
//
// The entry points and their signatures follow each release's
// src/interfaces/job_container.c (src/slurmd/common/job_container_plugin.c in
// 22.05); only those the building release looks up are defined, and the
// version script exports only them.
//
// Needs, in slurm.conf: JobContainerType=job_container/slurm_jail, and
// chroot.so in plugstack.conf.
extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>
}

#include "forward.hpp"

#include <cstdint>
#include <sys/types.h>

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
#error "Slurm 25.11 and later load namespace/slurm_jail (namespace_slurm_jail.cpp)"
#endif

extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_version;
const char plugin_name[] = "slurm-jail job container";
const char plugin_type[] = "job_container/slurm_jail";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

int init() {
    return SLURM_SUCCESS;
}

int fini() {
    return SLURM_SUCCESS;
}

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
// `step_create`: slurmd's child that becomes the step's slurmstepd. It stays
// on the node: chroot.so moves each step into the jail itself.
int container_p_join(slurm_step_id_t *step_id, uid_t uid, bool step_create) {
    if (step_create) {
        return SLURM_SUCCESS;
    }
    return sjail::forward::join(plugin_type, step_id->job_id, uid);
}
#else
int container_p_join(uint32_t job_id, uid_t uid) {
    return sjail::forward::join(plugin_type, job_id, uid);
}
#endif

int container_p_join_external(uint32_t job_id) {
    return sjail::forward::join_external(plugin_type, job_id);
}

// chroot.so's own slurmd start also deletes what crashed jobs left.
int container_p_restore(char * /*dir_name*/, bool /*recover*/) {
    return sjail::forward::restore(plugin_type);
}

// The extern step's slurmstepd enters the job through chroot.so's SPANK
// callbacks, like every step. The second argument is the step's uid up to
// 22.05 and its stepd_step_rec_t from 23.02; neither is needed.
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
int container_p_stepd_create(uint32_t /*job_id*/, void * /*step*/) {
    return SLURM_SUCCESS;
}
#else
int container_p_stepd_create(uint32_t /*job_id*/, uid_t /*uid*/) {
    return SLURM_SUCCESS;
}
#endif

int container_p_stepd_delete(uint32_t /*job_id*/) {
    return SLURM_SUCCESS;
}

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
// slurmd hands a plugin's settings to each slurmstepd; chroot.so reads its
// own from plugstack.conf there, so nothing goes over `fd`.
int container_p_send_stepd(int /*fd*/) {
    return SLURM_SUCCESS;
}

int container_p_recv_stepd(int /*fd*/) {
    return SLURM_SUCCESS;
}
#endif

#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(24, 5, 0)
// The job's namespaces are made by its first step, whose slurmstepd reads
// plugstack.conf afresh (slurmd's copy is as old as slurmd).
int container_p_create(uint32_t /*job_id*/, uid_t /*uid*/) {
    return sjail::forward::check_loaded(plugin_type);
}

int container_p_add_cont(uint32_t /*job_id*/, uint64_t /*cont_id*/) {
    return SLURM_SUCCESS;
}

int container_p_delete(uint32_t job_id) {
    return sjail::forward::remove(plugin_type, job_id);
}

void container_p_reconfig() {}
#endif

} // extern "C"
