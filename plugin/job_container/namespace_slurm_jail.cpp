// SPDX-License-Identifier: Apache-2.0
// namespace/slurm_jail: Slurm's namespace interface (Slurm 25.11 and later,
// which renamed job_container to namespace) for slurm-jail; the work is
// chroot.so's (forward.hpp).
//
// slurmd and slurmstepd call namespace_p_join in the children they fork for
// a job (tasks, task prolog and epilog scripts, sbcast,
// UnkillableStepProgram), namespace_p_join_external for pam_slurm_adopt, and
// namespace_p_restore when slurmd starts. The entry points and their
// signatures follow src/interfaces/namespace.c of the building release; the
// version script exports only them.
//
// Needs, in slurm.conf: NamespaceType=namespace/slurm_jail (alone: see
// chroot.so(8)), and chroot.so in plugstack.conf.
extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>
}

#include "forward.hpp"

#include <cstdint>
#include <sched.h>
#include <sys/types.h>

#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(25, 11, 0)
#error "Slurm before 25.11 loads job_container/slurm_jail (job_container_slurm_jail.cpp)"
#endif

extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_version;
const char plugin_name[] = "slurm-jail namespace";
const char plugin_type[] = "namespace/slurm_jail";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

int init() {
    return SLURM_SUCCESS;
}

int fini() {
    return SLURM_SUCCESS;
}

// `step_create`: slurmd's child that becomes the step's slurmstepd. It stays
// on the node: chroot.so moves each step into the jail itself.
int namespace_p_join(slurm_step_id_t *step_id, uid_t uid, bool step_create) {
    if (step_create) {
        return SLURM_SUCCESS;
    }
    return sjail::forward::join(plugin_type, step_id->job_id, uid);
}

// The extern step's slurmstepd, for pam_slurm_adopt: the job's tasks view is
// its mount namespace. slurmstepd keeps the list's entries only for this
// request and frees none of them; the one entry here is this process's own.
// SLURM_SUCCESS lets a plugin after this one in NamespaceType add its own.
int namespace_p_join_external(slurm_step_id_t *step_id, list_t *fd_map) {
    static ns_fd_map_t tasks_view{};
    const int fd = sjail::forward::join_external(plugin_type, step_id->job_id);
    if (fd < 0) {
        return SLURM_ERROR;
    }
    tasks_view.type = CLONE_NEWNS;
    tasks_view.fd = fd;
    slurm_list_append(fd_map, &tasks_view);
    return SLURM_SUCCESS;
}

// chroot.so's own slurmd start also deletes what crashed jobs left.
int namespace_p_restore(char * /*dir_name*/, bool /*recover*/) {
    return sjail::forward::restore(plugin_type);
}

// The extern step's slurmstepd enters the job through chroot.so's SPANK
// callbacks, like every step, and chroot.so's job epilog deletes the job's
// namespaces. (The argument is slurmstepd's stepd_step_rec_t, private to
// Slurm; 25.11 passes a slurm_step_id_t to stepd_delete. Neither is read.)
int namespace_p_stepd_create(void * /*step*/) {
    return SLURM_SUCCESS;
}

int namespace_p_stepd_delete(void * /*step*/) {
    return SLURM_SUCCESS;
}

// slurmd hands a plugin's settings to each slurmstepd; chroot.so reads its
// own from plugstack.conf there, so nothing goes over `fd`.
int namespace_p_send_stepd(int /*fd*/) {
    return SLURM_SUCCESS;
}

int namespace_p_recv_stepd(int /*fd*/) {
    return SLURM_SUCCESS;
}

// The jail makes no user namespace: slurmstepd loads its device BPF programs
// as usual and needs no BPF token.
bool namespace_p_can_bpf(void * /*step*/) {
    return true;
}

int namespace_p_setup_bpf_token(void * /*step*/) {
    return SLURM_SUCCESS;
}

} // extern "C"
