#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # $root, $images come from helpers.bash
# The rootfs builders (hack/jail-rootfs, images/build-base) work whatever
# descriptors their caller left open, retry a flaky mirror, and name what
# failed when the mirror stays broken. Each test builds for real, into a
# private cache directory, so a cached tarball never hides a failure.

load helpers

setup() {
    cache=$BATS_TEST_TMPDIR/cache
    mkdir -p "$cache"
}

teardown() {
    if [ -n "${proxy_pid:-}" ]; then kill "$proxy_pid" 2>/dev/null || true; fi
}

# with_high_fds CMD...: run CMD with descriptors 3..20 open, as Bats, CI
# runners and cron wrappers leave them.
with_high_fds() {
    local fd
    for fd in $(seq 3 20); do eval "exec $fd</dev/null"; done
    "$@"
}

# start_proxy ARGS...: the flaky mirror proxy; sets http_proxy for the test.
start_proxy() {
    node "$BATS_TEST_DIRNAME/lib/flaky-proxy.js" "$BATS_TEST_TMPDIR/port" \
        "$BATS_TEST_TMPDIR/refused" "$@" 3>&- &
    proxy_pid=$!
    local i
    for i in $(seq 50); do
        [ -s "$BATS_TEST_TMPDIR/port" ] && break
        sleep 0.1
    done
    export http_proxy=http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/port")
}

@test "build-base --tar-only: builds with descriptors 3..20 inherited" {
    # unstable (Slurm 26.05): its Release file has expired on the mirror
    # snapshot, so the build also proves apt was told not to check, and the
    # rootfs keeps that setting for the image builds' own apt runs
    SLURM_JAIL_CACHE=$cache run with_high_fds "$images/build-base" --slurm 26.05 --tar-only --rebuild
    assert_success
    assert_line --index -1 "$cache/debian-sid-minbase.tar"
    run tar -xOf "$cache/debian-sid-minbase.tar" ./etc/apt/apt.conf.d/99mmdebstrap
    assert_success
    assert_output --partial 'Acquire::Check-Valid-Until "false";'
    run tar -xOf "$cache/debian-sid-minbase.tar" ./etc/apt/sources.list
    assert_output --partial ' sid main'
}

@test "build-base: --slurm and --suite name the same suites; others are refused" {
    run "$images/build-base" --slurm 23.11
    assert_failure 2
    assert_output --partial "unknown Slurm release '23.11'; supported: 22.05 24.11 26.05"
    run "$images/build-base" --suite buster
    assert_failure
    assert_output --partial "unknown suite 'buster'"
    run "$images/build-base" --slurm 24.11 --suite trixie
    assert_failure
    assert_output --partial 'give --slurm or --suite, not both'
}

@test "jail-rootfs: with descriptors 3..20 inherited (as under Bats), transient 503s from the mirror are retried and the build succeeds" {
    start_proxy --fail-first-debs 5
    run with_high_fds "$root/hack/jail-rootfs" --cache-dir "$cache" --force
    assert_success
    local tarball=${lines[-1]}
    assert [ -s "$tarball" ]
    # The proxy really refused five package downloads.
    run grep -c '^503 .*\.deb$' "$BATS_TEST_TMPDIR/refused"
    assert_output 5
    run tar -xOf "$tarball" ./etc/slurm-jail-release
    assert_output --partial SLURM_JAIL_VERSION=
}

@test "jail-rootfs: a package the mirror never serves fails the build and is named" {
    # An essential package (base-passwd): apt fetches those first, so each
    # attempt fails before anything is unpacked.
    start_proxy --always-fail '/base-passwd_[^/]*\.deb$'
    MMDEBSTRAP_ATTEMPTS=2 MMDEBSTRAP_APT_RETRIES=1 \
        run with_high_fds "$root/hack/jail-rootfs" --cache-dir "$cache" --force
    assert_failure
    assert_output --partial 'transient mirror error (attempt 1 of 2), retrying'
    assert_output --partial 'failed after 2 attempt(s); what failed:'
    assert_output --regexp 'Failed to fetch http://[^ ]*/base-passwd_[^ ]*\.deb +503'
    assert_output --partial 'check the Debian mirror'
    # Two whole builds, each asking twice for the package (apt's one retry).
    assert_equal "$(grep -c '/base-passwd_' "$BATS_TEST_TMPDIR/refused")" 4
    # Nothing half-built is left where a later run would take it for a result.
    assert_equal "$(find "$cache" -name 'jail-rootfs-*')" ''
}
