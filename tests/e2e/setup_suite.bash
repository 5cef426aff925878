# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The e2e suite brings the local cluster up once and takes it down at the end.
# Durations go to the TAP stream as comments. SLURM_JAIL_LOCAL_SLURM=REL runs
# it, and every 'up' of its tests, on Slurm release REL (default: this
# machine's). SLURM_JAIL_E2E_KEEP=yes: a cluster already up (on that
# release) is used as it is, and taken down at the end like any other
# (tests/compat and shared-fs run e2e files one after another this way).

setup_suite() {
    : "${SLURM_JAIL_ROOT:?run through tests/run-all, or set SLURM_JAIL_ROOT}"
    # shellcheck source=tests/e2e/helpers.bash
    . "$(dirname "${BASH_SOURCE[0]}")/helpers.bash"
    # A fresh start: a cluster left from a dev session may run an old plugin.
    [ "${SLURM_JAIL_E2E_KEEP:-no}" = yes ] || "$LC" down >&2
    local t0=$EPOCHREALTIME
    "$LC" up >&2
    printf '# e2e: local-cluster up (Slurm %s) took %s s\n' "$("$LC" status | awk '$1 == "slurm" { print $2 }')" \
        "$(elapsed_since "$t0")" >&3
    rm -rf "$HOST_HOME"/e2e-*
    install_probe
    echo "$EPOCHREALTIME" >"$BATS_RUN_TMPDIR/e2e-start"
}

teardown_suite() {
    # shellcheck source=tests/e2e/helpers.bash
    . "$(dirname "${BASH_SOURCE[0]}")/helpers.bash"
    if [ -f "$BATS_RUN_TMPDIR/e2e-start" ]; then
        printf '# e2e: tests took %s s\n' "$(elapsed_since "$(cat "$BATS_RUN_TMPDIR/e2e-start")")" >&3
    fi
    # Always, even with SLURM_JAIL_E2E_KEEP: daemons that a file restarted
    # (use_cluster) hold Bats's descriptors, and Bats waits for them to close.
    "$LC" down >&2
}
