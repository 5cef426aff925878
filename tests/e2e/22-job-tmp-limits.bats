#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# job_tmp_size= and job_shm_size=: a job's /tmp and /dev/shm are bounded, and
# a job that fills its own leaves every other job's alone. The cluster is
# restarted with these settings for this file and restored afterwards.

setup_file() {
    load helpers
    use_cluster SLURM_JAIL_LOCAL_PLUGSTACK_EXTRA='job_tmp_size=16m job_shm_size=8m'
}


setup() {
    load helpers
    setup_job_test
}

teardown() {
    cancel_test_jobs
}

@test "the plugstack line carries the limits" {
    run cat "$STATE/etc/plugstack.conf"
    assert_output "$PLUGSTACK_LINE job_tmp_size=16m job_shm_size=8m"
}

@test "a job's /tmp and /dev/shm are tmpfs of the configured sizes" {
    run ush "srun -w node1 df -k --output=target,fstype,size /tmp /dev/shm"
    assert_success
    assert_line --regexp '^/tmp +tmpfs +16384$'
    assert_line --regexp '^/dev/shm +tmpfs +8192$'
}

@test "a job that fills its /tmp and /dev/shm does not stop the next job on the node" {
    run ush "sbatch --parsable -w node1 -o $T/fill.out --wrap '
        dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1 | grep -o \"No space left on device\"
        dd if=/dev/zero of=/dev/shm/fill bs=1M count=64 2>&1 | grep -o \"No space left on device\"
        df -k --output=avail /tmp /dev/shm | tail -n +2
        echo filled; exec sleep 931'"
    assert_success
    local filler=$output
    wait_until 30 grep -q filled "$HOST_HOME/$T/fill.out"
    run cat "$HOST_HOME/$T/fill.out"
    assert_equal "$(grep -c 'No space left on device' <<<"$output")" 2
    # Both are full: no block left.
    assert_equal "$(grep -cx ' *0' <<<"$output")" 2
    # While it holds them full, the next job on the node writes as usual.
    run ush "srun -w node1 sh -c 'dd if=/dev/zero of=/tmp/mine bs=1M count=4 2>/dev/null &&
        dd if=/dev/zero of=/dev/shm/mine bs=1M count=4 2>/dev/null && ls /tmp /dev/shm && echo wrote'"
    assert_success
    assert_line wrote
    assert_line mine
    refute_line fill
    run ush "scancel $filler"
    assert_success
    # After it, the node is as before: the next job starts with empty ones.
    wait_until 30 test ! -e "$(job_state_dir node1 "$filler")"
    run ush "srun -w node1 sh -c '{ ls -A /tmp; ls -A /dev/shm; } | grep -c . || true'"
    assert_success
    assert_output 0
}
