# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034 # read by jail-on-glusterfs.bats and tests/run-all
# The e2e files that the shared-fs suite runs with the jail on GlusterFS:
# those that touch the jail most (entry, writes, failures, isolation, SSH
# logins, the GPU driver, the soak). When tests/run-all runs both suites,
# the e2e suite leaves these out, so each file runs once, on the shared jail.
shared_fs_e2e_files=(01-jail-entry 02-shared-root 06-fail-closed 12-job-isolation 09-ssh 20-gpu 07-soak)
