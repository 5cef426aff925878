# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Calling the local cluster's own functions from a test (tests/release-builds,
# tests/shared-fs), with the cluster's settings.

# lc_call FUNCTION ARGS...: a function of hack/lib/local-cluster (common.sh,
# jail.sh, storage.sh: jail_rootfs_args, gluster_cli, storage_counts, ...),
# run in a subshell.
lc_call() {
    (
        LC_LIB=$SLURM_JAIL_ROOT/hack/lib/local-cluster
        # shellcheck source=hack/lib/slurm-releases.sh
        . "$LC_LIB/../slurm-releases.sh"
        # shellcheck source=hack/lib/local-cluster/common.sh
        . "$LC_LIB/common.sh"
        # shellcheck source=hack/lib/local-cluster/jail.sh
        . "$LC_LIB/jail.sh"
        # shellcheck source=hack/lib/local-cluster/storage.sh
        . "$LC_LIB/storage.sh"
        "$@"
    )
}
