#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# slurm-jail-fs-check without a cluster: its options, its report and its
# errors. A jail on a network filesystem, a hung and a stopped server, and the
# drain and resume through real Slurm: tests/shared-fs.

load helpers

fs_check() {
    "$HEALTH_BIN/slurm-jail-fs-check" --config /dev/null "$@"
}

# A root-owned jail (not below the sticky /tmp, which the plugin's walk
# refuses).
make_jail() {
    JAILDIR=$(mktemp -d /run/sjail-fs-check.XXXXXX)
    chmod 0755 "$JAILDIR"
    mkdir -p "$JAILDIR/etc"
}

teardown() {
    [ -z "${JAILDIR:-}" ] || rm -rf "$JAILDIR"
}

@test "fs-check: --help and a man page" {
    run "$HEALTH_BIN/slurm-jail-fs-check" --help
    assert_success
    assert_output --partial '--jail'
    assert_output --partial '--timeout'
    MANWIDTH=400 run man -l "$SLURM_JAIL_ROOT/health/man/slurm-jail-fs-check.8"
    assert_success
    assert_output --partial 'slurm-jail-health: jail:'
}

@test "fs-check: a jail that answers passes and names its filesystem" {
    make_jail
    run fs_check --no-drain --jail "$JAILDIR"
    assert_success
    assert_output --regexp "^ok: the jail's filesystem answered in [0-9.]+ s \\([a-z0-9.]+ [^ ]+ mounted at /[^ ]*\\)$"
    run fs_check --no-drain --json --jail "$JAILDIR"
    assert_success
    run jq -r '[.passed, .cause, (.filesystem | test(" mounted at /"))] | @tsv' <<<"$output"
    assert_output "$(printf 'true\t\ttrue')"
}

@test "fs-check: a missing jail, or one a user owns, fails with the cause" {
    run fs_check --no-drain --jail /run/no-such-jail
    assert_failure 1
    assert_output --partial "FAIL: the jail's filesystem"
    assert_output --partial "/run/no-such-jail"
    make_jail
    chown 5001 "$JAILDIR"
    run fs_check --no-drain --jail "$JAILDIR"
    assert_failure 1
    assert_output --partial "cannot serve the jail"
    assert_output --partial "root"
}

@test "fs-check: bad settings are refused before any work" {
    run fs_check --no-drain
    assert_failure
    assert_output --partial '--jail is required'
    run fs_check --no-drain --jail relative/jail
    assert_failure 2
    assert_output --partial "--jail relative/jail"
    run fs_check --no-drain --jail /run --timeout 0
    assert_failure
    run env -u SLURMD_NODENAME "$HEALTH_BIN/slurm-jail-fs-check" --config /dev/null --jail /run
    assert_failure 2
    assert_output --partial 'no node name: slurmd sets SLURMD_NODENAME'
}
