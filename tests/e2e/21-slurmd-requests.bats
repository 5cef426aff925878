#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# What slurmd does for a job outside any step's task (sbcast, the extern
# step of PrologFlags=Contain) happens in the job's view of the jail, through
# job_container/slurm_jail.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    setup_job_test
    HOSTONLY=/var/tmp/e2e-hostonly-$$
    MISSING=/var/tmp/e2e-missing-$$
}

teardown() {
    cancel_test_jobs
    rm -rf "$HOSTONLY" "${JAIL:?}/srv/e2e-sbcast-$$" /tmp/e2e-sbcast-$$
}

@test "the cluster runs job_container/slurm_jail with PrologFlags=Contain" {
    run ush "scontrol show config"
    # Slurm 25.11 renamed the plugin type to namespace.
    if cluster_release_at_least 25.11; then
        assert_line --regexp '^NamespaceType += namespace/slurm_jail$'
    else
        assert_line --regexp '^JobContainerType += job_container/slurm_jail$'
    fi
    assert_line --regexp '^PrologFlags += .*Contain'
}

@test "sbcast lands in the job's /tmp, the jail and the home, never on the node" {
    echo "payload-$$" >"$HOST_HOME/$T/src"
    chown "$TEST_UID" "$HOST_HOME/$T/src"
    # The jail's /srv is not the node's: a copy on the node would show.
    local shared
    shared=$(jail_dir "e2e-sbcast-$$")/f
    run ush "sbatch --wait -w node1 -o $T/bcast.out --wrap '
        sbcast $T/src /tmp/e2e-sbcast-$$ && srun cat /tmp/e2e-sbcast-$$
        sbcast $T/src $shared && srun cat $shared
        sbcast $T/src \$HOME/$T/copy && srun cat \$HOME/$T/copy'"
    assert_success
    run cat "$HOST_HOME/$T/bcast.out"
    assert_output "payload-$$
payload-$$
payload-$$"
    assert_equal "$(cat "$JAIL$shared")" "payload-$$"
    assert_equal "$(cat "$HOST_HOME/$T/copy")" "payload-$$"
    [ ! -e "$shared" ]
    [ ! -e "/tmp/e2e-sbcast-$$" ]
    [ ! -e "$STATE/nodes/node1/tmp/e2e-sbcast-$$" ]
    [ ! -e "$JAIL/tmp/e2e-sbcast-$$" ]
}

@test "sbcast to a directory that exists only on the node fails like a missing one" {
    # Writable for the user on the node; absent in the jail.
    install -d -m 1777 "$HOSTONLY"
    [ ! -e "$JAIL$HOSTONLY" ]
    echo data >"$HOST_HOME/$T/src"
    chown "$TEST_UID" "$HOST_HOME/$T/src"
    run ush "salloc -w node1 -N1 sh -c '
        echo =hostonly; sbcast $T/src $HOSTONLY/x; echo rc=\$?
        echo =missing; sbcast $T/src $MISSING/x; echo rc=\$?' 2>&1"
    local on_host missing
    on_host=$(sed -n '/^=hostonly$/,/^rc=/p' <<<"$output" | sed 1d)
    missing=$(sed -n '/^=missing$/,/^rc=/p' <<<"$output" | sed 1d)
    echo "host-only: $on_host" >&2
    echo "missing: $missing" >&2
    assert_line --regexp '^rc=[1-9]'
    [[ $on_host == *rc=[1-9]* ]]
    [[ $missing == *rc=[1-9]* ]]
    # The same words, up to the path and the job's numbers.
    assert_equal "$(sed "s|$HOSTONLY|DIR|g; s/[0-9]\{2,\}/N/g" <<<"$on_host")" \
        "$(sed "s|$MISSING|DIR|g; s/[0-9]\{2,\}/N/g" <<<"$missing")"
    # Nothing was written on the node.
    assert_equal "$(find "$HOSTONLY" -mindepth 1 | wc -l)" 0
}

@test "the extern step's process (up to Slurm 24.11) is in the jail and in the job's PID namespace" {
    run ush "sbatch --parsable -w node1 -o $T/job.out --wrap 'echo ready; exec sleep 921'"
    assert_success
    local job=$output stepd sleeper
    wait_until 30 test -s "$HOST_HOME/$T/job.out"
    stepd=$(pgrep -f "^slurmstepd: \[$job\.extern\]")
    [ -n "$stepd" ]
    if cluster_release_at_least 25.05; then
        # From Slurm 25.05 the extern step has no process of its own: the
        # processes pam_slurm_adopt adopts are its only ones (09-ssh).
        run pgrep -P "$stepd"
        assert_failure
        return 0
    fi
    sleeper=$(pgrep -P "$stepd" -x sleep)
    [ -n "$sleeper" ]
    # Its root is the jail: the jail's marker, the same file, no host path.
    assert_equal "$(stat -L -c %d:%i "/proc/$sleeper/root$MARKER")" "$(stat -c %d:%i "$JAIL$MARKER")"
    [ ! -e "/proc/$sleeper/root$HOST_ONLY" ]
    # Its PID namespace is the job's, as for the batch step's task.
    local job_pidns task
    job_pidns="pid:[$(job_ns_inode node1 "$job" pid)]"
    task=$(pgrep -u "$TEST_UID" -f '^sleep 921$')
    assert_equal "$(readlink "/proc/$task/ns/pid")" "$job_pidns"
    assert_equal "$(readlink "/proc/$sleeper/ns/pid")" "$job_pidns"
}
