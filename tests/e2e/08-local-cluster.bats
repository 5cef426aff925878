#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The local-cluster tool itself: idempotent up, locking, status/logs, clear
# usage errors, and a down that leaves the host as it was. Runs last: it
# takes the cluster down and brings it up again for teardown_suite.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    load_assertions
}

daemon_pids() {
    local f
    for f in "$STATE/munge/munged.pid" "$STATE/ctld/slurmctld.pid" "$STATE"/nodes/node*/spool/slurmd.pid; do
        pid_in "$f" 2>/dev/null
    done | sort
}

# The host's mount table, without podman's containers (other suites).
# The host mounts the local cluster could leave behind (other work on this
# machine mounts and unmounts its own things meanwhile).
host_mounts() {
    findmnt -rn -o TARGET,SOURCE,FSTYPE |
        grep -E "^($STATE|/mnt/jail|/run/munge|/run/slurm-jail|/var/spool/slurmd|/var/lib/slurm-jail)(/| )" |
        sort || true
}

# Whether another local cluster with this one's test users (the
# slurm-testsuite suite's, beside this suite) is registered: it keeps them
# (e2e 28). An entry is the state directory, then the users (none: the
# default ones).
other_cluster_registered() {
    local f users
    for f in /run/slurm-jail-local-clusters/*; do
        [ -f "$f" ] && [ "$(sed -n 1p "$f")" != "$STATE" ] || continue
        users=$(sed -n 2p "$f")
        [ "${users:-$LC_USERS_DEFAULT}" != "$LC_USERS" ] || return 0
    done
    return 1
}

@test "up on a running cluster keeps the same daemons and is ready" {
    local before
    before=$(daemon_pids)
    run "$LC" up
    assert_success
    assert_output --partial "ready in"
    assert_equal "$(daemon_pids)" "$before"
}

@test "two concurrent up calls wait for each other and leave one healthy cluster" {
    local before
    before=$(daemon_pids)
    "$LC" up >"$BATS_TEST_TMPDIR/a" 2>&1 &
    "$LC" up >"$BATS_TEST_TMPDIR/b" 2>&1
    wait $!
    grep -q "ready in" "$BATS_TEST_TMPDIR/a"
    grep -q "ready in" "$BATS_TEST_TMPDIR/b"
    assert_equal "$(daemon_pids)" "$before"
    run ush "srun -N2 $PROBE"
    assert_in_jail 2
}

@test "status lists the daemons and both idle nodes" {
    run "$LC" status
    assert_success
    assert_line --regexp '^ctld +[0-9]+$'
    assert_line --regexp '^node1 +1 +debug\* +idle'
    assert_line --regexp '^node2 +1 +debug\* +idle'
}

@test "logs shows a node's slurmd log; an unknown name is a clear error" {
    run "$LC" logs node1
    assert_success
    assert_output --partial "slurmd started"
    run "$LC" logs bogus
    assert_failure
    assert_output --partial "unknown name 'bogus'"
}

@test "a readiness probe that fails is named, with the daemon's last log lines" {
    local ctld last
    ctld=$(pid_in "$STATE/ctld/slurmctld.pid")
    kill -STOP "$ctld"
    SLURM_JAIL_LOCAL_TIMEOUT=2 run "$LC" up
    last=$(tail -n 1 "$STATE/logs/slurmctld.log")
    kill -CONT "$ctld"
    assert_failure
    assert_output --partial "not ready: probe 'ctld' still failing after 2s"
    assert_output --partial "$last"
    run "$LC" up
    assert_success
}

@test "bad usage gets an error that names the cause and the fix" {
    run "$LC" up --workers many
    assert_failure
    assert_output --partial "give a number from 1 to 64"
    run "$LC" run srun hostname
    assert_failure
    assert_output --partial "put the command after --"
    run "$LC" frobnicate
    assert_failure
    assert_output --partial "unknown command 'frobnicate'"
}

@test "down removes every process, mount, namespace, bridge and the user; up again works" {
    local pids before_mounts p bridge
    pids="$(daemon_pids) $(netns_pids ctld login node1 node2)"
    bridge=$(cat "$STATE/bridge")
    ip link show "$bridge"
    run "$LC" down
    assert_success
    for p in $pids; do
        ! kill -0 "$p" 2>/dev/null || fail "process $p ($(tr '\0' ' ' <"/proc/$p/cmdline")) survived down"
    done
    run findmnt -rn -o TARGET
    refute_output --partial "$STATE"
    run ip -o link show
    refute_output --partial "$bridge"
    run getent passwd "$TEST_USER"
    if other_cluster_registered; then assert_success; else assert_failure; fi
    run bash -c "ps -eo args | grep -F '$STATE' | grep -v grep"
    assert_output ''
    # down is idempotent, and a second up/down cycle leaves the same host.
    run "$LC" down
    assert_success
    before_mounts=$(host_mounts)
    local t0=$EPOCHREALTIME
    run "$LC" up
    printf '# local-cluster: warm up took %s s\n' "$(elapsed_since "$t0")" >&3
    assert_success
    run ush "srun -N2 $PROBE"
    assert_in_jail 2
    run "$LC" down
    assert_success
    assert_equal "$(host_mounts)" "$before_mounts"
    # Leave the cluster up for the rest of the suite (teardown_suite downs it).
    run "$LC" up
    assert_success
}

@test "up refuses a bridge of the same name that it did not make" {
    local bridge
    bridge=$(cat "$STATE/bridge")
    run "$LC" down
    assert_success
    ip link add "$bridge" type bridge
    run "$LC" up
    ip link del "$bridge"
    assert_failure
    assert_output --partial "bridge $bridge exists but this cluster ($STATE) did not make it"
    run "$LC" up
    assert_success
}

@test "a fresh up leaves no error: line in slurmctld's log" {
    run "$LC" down
    assert_success
    run "$LC" up
    assert_success
    # Each start logs afresh (the previous log is kept as .prev).
    # shellcheck source=tests/lib/slurmctld_log.bash
    . "$SLURM_JAIL_ROOT/tests/lib/slurmctld_log.bash"
    run ctld_start_errors "$STATE/logs/slurmctld.log"
    assert_success
    assert_output ''
}
