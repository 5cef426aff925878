# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The e2e suite brings the local cluster up once and takes it down at the end.
# Durations go to the TAP stream as comments. SLURM_JAIL_E2E_SLURM=REL runs
# it on Slurm release REL (local-cluster up --slurm REL; default: this
# machine's).

setup_suite() {
    : "${SLURM_JAIL_ROOT:?run through tests/run-all, or set SLURM_JAIL_ROOT}"
    # shellcheck source=tests/e2e/helpers.bash
    . "$(dirname "${BASH_SOURCE[0]}")/helpers.bash"
    # A fresh start: a cluster left from a dev session may run an old plugin.
    "$LC" down >&2
    local t0=$EPOCHREALTIME
    "$LC" up ${SLURM_JAIL_E2E_SLURM:+--slurm "$SLURM_JAIL_E2E_SLURM"} >&2
    printf '# e2e: local-cluster up%s took %s s\n' "${SLURM_JAIL_E2E_SLURM:+ --slurm $SLURM_JAIL_E2E_SLURM}" \
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
    "$LC" down >&2
}
