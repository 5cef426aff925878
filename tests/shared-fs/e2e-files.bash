# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # read by jail-on-glusterfs.bats and tests/run-all
# The e2e files that the shared-fs suite runs with the jail on GlusterFS:
# those that touch the jail most (entry, writes, failures, SSH logins, the
# GPU driver, upgrades of a jail with generations, the soak). When
# tests/run-all runs both suites, the e2e suite leaves these out, so each
# file runs once, on the shared jail. Job isolation (12) is not among them:
# it checks the job's own namespaces, /tmp, /dev/shm and IPC, none of them
# on the jail's filesystem, and took 164 s on GlusterFS against 43 s on a
# local jail (compat, 24.11). Generations (36) took 269 s on GlusterFS in a
# full cold run (101 s alone, against 20 s on a local jail): its lane ends
# before the build lane (release-builds, images, chart), which ends a run.
shared_fs_e2e_files=(01-jail-entry 02-shared-root 06-fail-closed 09-ssh 20-gpu 36-jail-generations 07-soak)
