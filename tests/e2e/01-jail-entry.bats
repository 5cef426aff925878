#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Every Slurm path runs its tasks inside the jail: the marker file exists only
# in the jail, and a host-only path is absent.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    setup_job_test
}

@test "precondition: the marker is only in the jail, the host-only path only on the host" {
    [ ! -e "$MARKER" ]
    [ -f "$JAIL$MARKER" ]
    [ -e "$HOST_ONLY" ]
    [ ! -e "$JAIL$HOST_ONLY" ]
}

@test "srun: tasks on both nodes run in the jail" {
    run ush "srun -N2 $PROBE"
    assert_success
    assert_in_jail 2
    assert_line "in-jail node1"
    assert_line "in-jail node2"
}

@test "srun: cat /etc/os-release shows the jail's file on both nodes" {
    run ush "srun -N2 cat /etc/os-release $MARKER"
    assert_success
    assert_equal "$(grep -c '^SLURM_JAIL_VERSION=' <<<"$output")" 2
    assert_equal "$(grep -c '^PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"' <<<"$output")" 2
}

@test "sbatch: a batch script file runs in the jail" {
    printf '#!/bin/bash\n#SBATCH --output=%s\n%s\ncat %s\n' \
        "$HOME_IN_JAIL/$T/job.out" "$PROBE" "$MARKER" >"$HOST_HOME/$T/job.sh"
    run ush "sbatch --wait $T/job.sh"
    assert_success
    run cat "$HOST_HOME/$T/job.out"
    assert_in_jail 1
    assert_output --partial SLURM_JAIL_VERSION=
}

@test "salloc + srun: the steps of an allocation run in the jail" {
    run ush "salloc -N2 srun $PROBE"
    assert_success
    assert_in_jail 2
}

@test "job array: every array task runs in the jail" {
    run ush "sbatch --wait --array=1-4 -o $T/arr-%a.out --wrap '$PROBE; echo task=\$SLURM_ARRAY_TASK_ID'"
    assert_success
    local i
    for i in 1 2 3 4; do
        run cat "$HOST_HOME/$T/arr-$i.out"
        assert_in_jail 1
        assert_line "task=$i"
    done
}

@test "srun inside a batch script: its tasks on both nodes run in the jail" {
    run ush "sbatch --wait -N2 -o $T/inner.out --wrap 'srun -N2 $PROBE'"
    assert_success
    run cat "$HOST_HOME/$T/inner.out"
    assert_in_jail 2
}
