# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # read by jail-on-glusterfs.bats and tests/run-all
# The e2e files that the shared-fs suite runs with the jail on GlusterFS:
# those that touch the jail most (entry, writes, failures, SSH logins, the
# GPU driver, the soak). When tests/run-all runs both suites, the e2e suite
# leaves these out, so each file runs once, on the shared jail. Job
# isolation (12) is not among them: it checks the job's own namespaces,
# /tmp, /dev/shm and IPC, none of them on the jail's filesystem, and took
# 164 s on GlusterFS against 43 s on a local jail (compat, 24.11). Nor are
# upgrades of a jail with generations (36): 269 s on GlusterFS in a full
# cold run (83 s alone) against 17 s on a local jail. They pass there:
#   SLURM_JAIL_LOCAL_JAIL_FS=glusterfs hack/local-cluster up
#   SLURM_JAIL_LOCAL_JAIL_FS=glusterfs SLURM_JAIL_E2E_KEEP=yes SLURM_JAIL_ROOT=$PWD \
#       SLURM_JAIL_BUILD_DIR=$PWD/build bats tests/e2e/36-jail-generations.bats
shared_fs_e2e_files=(01-jail-entry 02-shared-root 06-fail-closed 09-ssh 20-gpu 07-soak)
