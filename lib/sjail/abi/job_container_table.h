/* SPDX-License-Identifier: Apache-2.0 */
/* The one link between two front ends loaded into the same slurmd or
 * slurmstepd: job_container/slurm_jail does its work through chroot.so,
 * which holds the step's state (lib/sjail/core/job/step_state.hpp) and the
 * plugstack.conf settings. chroot.so exports one symbol,
 * SJAIL_JOB_CONTAINER_TABLE, a function that returns this table; the shim
 * looks up that symbol alone, typed by this header on both sides, and
 * refuses to work with a table of another version.
 *
 * Change the table only by raising SJAIL_JOB_CONTAINER_TABLE_VERSION: a
 * chroot.so and a shim from different builds then fail loudly at load
 * instead of calling a function with the wrong arguments. */
#ifndef SJAIL_ABI_JOB_CONTAINER_TABLE_H
#define SJAIL_ABI_JOB_CONTAINER_TABLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SJAIL_JOB_CONTAINER_TABLE_VERSION 1u
#define SJAIL_JOB_CONTAINER_TABLE "sjail_job_container_table"

/* Each returns 0, or -1 after logging why. */
struct sjail_job_container_calls {
    uint32_t version; /* SJAIL_JOB_CONTAINER_TABLE_VERSION of chroot.so's build */
    uint32_t size;    /* sizeof(struct sjail_job_container_calls) there */
    /* A child of slurmd or slurmstepd joins the job's tasks view, or, when
     * that fails, goes to the dead end (nothing of it runs on the node). */
    int (*join)(uint32_t job);
    /* An fd of the job's tasks view for pam_slurm_adopt, or -1. */
    int (*join_external)(uint32_t job);
    /* The job ended on the node: its namespaces go. */
    int (*remove)(uint32_t job);
    /* slurmd started: namespaces of jobs with nothing left on the node go. */
    int (*restore)(void);
};

/* Exported by chroot.so under the name SJAIL_JOB_CONTAINER_TABLE. */
const struct sjail_job_container_calls *sjail_job_container_table(void);

#ifdef __cplusplus
}
#endif

#endif
