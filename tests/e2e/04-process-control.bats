#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Exit codes, scancel, time limits and output files work for jailed tasks.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    setup_job_test
}

job_state() { ush "scontrol show job $1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }

@test "exit 3 in a task comes back as 3 from srun and from sbatch --wait" {
    run ush "srun sh -c 'test -f $MARKER && exit 3'"
    assert_equal "$status" 3
    run ush "sbatch --wait -o $T/exit.out --wrap 'test -f $MARKER && exit 3'"
    assert_equal "$status" 3
}

@test "a task killed by a signal is reported as such" {
    run ush "srun sh -c 'test -f $MARKER && kill -KILL \$\$'"
    assert_failure
    assert_output --partial Killed
}

@test "scancel kills a running jailed task" {
    run ush "sbatch --parsable -o $T/cancel.out --wrap 'cat $MARKER; exec sleep 301'"
    assert_success
    local job=$output
    wait_until 30 grep -q SLURM_JAIL_VERSION= "$HOST_HOME/$T/cancel.out"
    pgrep -u "$TEST_UID" -f 'sleep 301'
    run ush "scancel $job"
    assert_success
    wait_until 30 bash -c "! pgrep -u $TEST_UID -f 'sleep 301'"
    assert_equal "$(job_state "$job")" CANCELLED
}

@test "--time kills a task that runs past its limit" {
    # A minute is the least srun takes (Slurm keeps limits in whole
    # minutes). Instead of waiting it out, root lowers the running job's
    # limit to none left: slurmctld's next check of time limits (every 30 s)
    # ends the job as it ends one whose minute ran out.
    local pid job rc=0
    ush "srun --time=1 sh -c 'cat $MARKER; exec sleep 302'" >"$BATS_TEST_TMPDIR/out" 2>&1 &
    pid=$!
    wait_until 30 pgrep -u "$TEST_UID" -fx 'sleep 302'
    job=$(ctld_exec squeue -h -t RUNNING -u "$TEST_UID" -o %i)
    ctld_exec scontrol update JobId="$job" TimeLimit=0
    wait "$pid" || rc=$?
    [ "$rc" -ne 0 ]
    run cat "$BATS_TEST_TMPDIR/out"
    assert_output --partial SLURM_JAIL_VERSION=
    assert_output --partial "DUE TO TIME LIMIT"
    run pgrep -u "$TEST_UID" -f 'sleep 302'
    assert_failure
}

@test "sbatch -o/-e files land where the user asked, inside the jail" {
    run ush "mkdir -p $T/out && sbatch --wait -o $T/out/%j.stdout -e $T/out/%j.stderr \
        --wrap 'echo to-stdout; echo to-stderr >&2'"
    assert_success
    local job=${output##* }
    assert_equal "$(cat "$HOST_HOME/$T/out/$job.stdout")" to-stdout
    assert_equal "$(cat "$HOST_HOME/$T/out/$job.stderr")" to-stderr
    # The user finds them from the login node too.
    run ush "cat $T/out/$job.stdout $T/out/$job.stderr"
    assert_output "to-stdout
to-stderr"
}

@test "srun -o with a path that exists only in the jail writes there" {
    local dir
    dir=$(jail_dir "e2e-out-$$")/out
    run ush "mkdir $dir && srun -N2 -o $dir/task-%t.out hostname"
    assert_success
    assert_equal "$(cat "$JAIL$dir/task-0.out" "$JAIL$dir/task-1.out" | sort | tr '\n' ' ')" "node1 node2 "
    [ ! -e "$dir" ]
    rm -rf "${JAIL:?}/srv/e2e-out-$$"
}
