#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# What slurmstepd does for a step as the user, besides starting its tasks,
# happens in the job's view too: it opens -i/-o/-e files where the job's /proc
# shows only the job, and task epilog scripts are born in the job's PID
# namespace and go with the job.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    setup_job_test
}

teardown() {
    cancel_both_users_jobs
    pkill -u "$TEST_UID" -f '^sleep 92[0-9]$' || true
    pkill -u "$OTHER_UID" -f '^sleep 92[0-9]$' || true
    rm -f /var/tmp/e2e-escape-* 2>/dev/null || true
    nsenter -t "$(slurmd_pid node1)" -m -- sh -c 'rm -f /var/tmp/e2e-escape-*' || true
}

# write_script NAME: stdin becomes the user's script $T/NAME.
write_script() {
    cat >"$HOST_HOME/$T/$1"
    chown "$TEST_UID:$TEST_UID" "$HOST_HOME/$T/$1"
    chmod 0755 "$HOST_HOME/$T/$1"
}

# user_pid_of PATTERN UID: the one process of UID whose command line is PATTERN.
user_pid_of() { pgrep -u "$2" -f "^$1\$" | head -n 1; }

@test "a batch step's -i file cannot read another user's job or the node's PID 1 through /proc" {
    run ush_other "sbatch --parsable -w node1 -o /dev/null --wrap 'exec sleep 921'"
    assert_success
    wait_until 30 pgrep -u "$OTHER_UID" -f '^sleep 921$'
    local other
    other=$(user_pid_of 'sleep 921' "$OTHER_UID")

    run ush "sbatch --wait -w node1 -i /proc/$other/cmdline -o $T/other.out --wrap 'cat; echo end-of-input'"
    run cat "$HOST_HOME/$T/other.out"
    refute_output --partial 921

    run ush "sbatch --wait -w node1 -i /proc/1/cmdline -o $T/init.out --wrap 'cat; echo; echo end-of-input'"
    assert_success
    run cat "$HOST_HOME/$T/init.out"
    assert_line end-of-input
    # The job's PID 1 is its own init, never the node's.
    assert_output --partial sjail-job-init
    refute_output --partial "$(tr '\0' ' ' </proc/1/cmdline | cut -c1-20)"
}

@test "step I/O files cannot reach the node's root through the user's own process outside the jail" {
    as_user_on_node node1 sleep 922
    wait_until 10 pgrep -u "$TEST_UID" -f '^sleep 922$'
    local outside
    outside=$(user_pid_of 'sleep 922' "$TEST_UID")

    # srun hands a name with a % pattern to slurmstepd, which opens it.
    run ush "srun -w node1 -o '/proc/$outside/root/var/tmp/e2e-escape-%u' echo written"
    run nsenter -t "$(slurmd_pid node1)" -m -- sh -c 'ls /var/tmp/e2e-escape-* 2>/dev/null'
    assert_output ''
    run ls "/var/tmp/e2e-escape-$TEST_USER" "/var/tmp/e2e-escape-$TEST_UID"
    assert_failure

    # A batch step's stdin is opened by slurmstepd too.
    run ush "sbatch --wait -w node1 -i /proc/$outside/root$HOST_ONLY -o $T/host.out --wrap 'cat; echo end-of-input'"
    run cat "$HOST_HOME/$T/host.out"
    refute_output --partial 'local-cluster'
}

@test "a task epilog is born in the job's PID namespace, sees only the job and goes with it" {
    run ush "sbatch --parsable -w node1 -o /dev/null --wrap 'exec sleep 924'"
    assert_success
    wait_until 30 pgrep -u "$TEST_UID" -f '^sleep 924$'
    local other_job
    other_job=$(user_pid_of 'sleep 924' "$TEST_UID")
    write_script epilog.sh <<EOF
#!/bin/sh
kill -0 $other_job 2>/dev/null && echo REACHED-$other_job >$HOME_IN_JAIL/$T/epilog-reached
readlink /proc/self/ns/pid >$HOME_IN_JAIL/$T/epilog-pidns
tr '\0' ' ' </proc/1/cmdline >$HOME_IN_JAIL/$T/epilog-init
ps -eo user=,args= >$HOME_IN_JAIL/$T/epilog-ps
setsid sleep 923 </dev/null >/dev/null 2>&1 &
EOF
    run ush "srun -w node1 --task-epilog=$HOME_IN_JAIL/$T/epilog.sh sh -c 'readlink /proc/self/ns/pid >$T/task-pidns'"
    assert_success
    wait_until 30 test -s "$HOST_HOME/$T/epilog-ps"

    assert_equal "$(cat "$HOST_HOME/$T/epilog-pidns")" "$(cat "$HOST_HOME/$T/task-pidns")"
    run cat "$HOST_HOME/$T/epilog-init"
    assert_output --partial sjail-job-init
    run cat "$HOST_HOME/$T/epilog-ps"
    refute_output --partial slurmd
    refute_output --partial slurmstepd
    refute_output --partial "$OTHER_USER"
    refute_output --partial 'sleep 924'
    # It cannot signal the user's other job by its node PID.
    assert [ ! -e "$HOST_HOME/$T/epilog-reached" ]
    # The epilog's own child ends with the job.
    wait_until 30 bash -c "! pgrep -u $TEST_UID -f '^sleep 923\$' >/dev/null"
}

# Slurm stops a task epilog at its limit (5 s for --task-epilog) by killing
# its process group; as without a jail, the script and what it started in
# its group die then, and the step's output is released: the job ends at
# once instead of 60 s later (slurmstepd's "Abandoning IO"), long before
# the script or its child could write a marker, 30 s in.
@test "a task epilog that overruns Slurm's limit is killed with its process group" {
    write_script epilog.sh <<EOF
#!/bin/sh
echo started >$HOME_IN_JAIL/$T/epilog-started
(sleep 29.5; echo child >$HOME_IN_JAIL/$T/epilog-child-survived) &
sleep 29.5
echo script >$HOME_IN_JAIL/$T/epilog-survived
EOF
    run ush "srun -w node1 --task-epilog=$HOME_IN_JAIL/$T/epilog.sh true"
    assert_success
    assert [ -f "$HOST_HOME/$T/epilog-started" ]
    # The job is gone with everything of it, long before the markers' time.
    wait_until 20 bash -c "! pgrep -u $TEST_UID -f '^sleep 29.5\$' >/dev/null"
    assert [ ! -e "$HOST_HOME/$T/epilog-survived" ]
    assert [ ! -e "$HOST_HOME/$T/epilog-child-survived" ]
}
