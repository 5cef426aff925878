#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# chroot.so alone (no job container): slurmstepd still opens the step's files
# in the job's view, and a task epilog, which only the job container could
# move into the job, does not run at all. The cluster is restarted without
# the job container for this file and restored afterwards.

setup_file() {
    load helpers
    use_cluster SLURM_JAIL_LOCAL_JOB_CONTAINER=no
}


setup() {
    load helpers
    setup_job_test
}

teardown() {
    cancel_test_jobs
    pkill -u "$TEST_UID" -f '^sleep 93[0-9]$' || true
    nsenter -t "$(slurmd_pid node1)" -m -- sh -c 'rm -f /var/tmp/e2e-escape-*' || true
}

@test "the cluster runs chroot.so without the job container" {
    run grep -c JobContainerType "$STATE/etc/slurm.conf"
    assert_output 0
    run ush "srun -w node1 $PROBE"
    assert_success
    assert_in_jail 1
}

@test "without the job container a task epilog does not run, and the task still does" {
    cat >"$HOST_HOME/$T/epilog.sh" <<EOF
#!/bin/sh
echo ran >$HOME_IN_JAIL/$T/epilog-ran
EOF
    chown "$TEST_UID:$TEST_UID" "$HOST_HOME/$T/epilog.sh"
    chmod 0755 "$HOST_HOME/$T/epilog.sh"
    run ush "srun -w node1 --task-epilog=$HOME_IN_JAIL/$T/epilog.sh sh -c 'echo task-ran >$T/task-ran'"
    assert_success
    assert [ -s "$HOST_HOME/$T/task-ran" ]
    # Give a late epilog time to show itself before asserting it never ran.
    sleep 2
    assert [ ! -e "$HOST_HOME/$T/epilog-ran" ]
    # slurmstepd logs the refused execve first and "Could not run user
    # task_epilog" only after reaping it, which may be after srun returned.
    run "$LC" logs node1
    assert_output --regexp "execve\\($HOME_IN_JAIL/$T/epilog\\.sh\\): Permission denied|user task_epilog"
}

@test "without the job container step I/O files still cannot reach the node's root through /proc" {
    as_user_on_node node1 sleep 931
    wait_until 10 pgrep -u "$TEST_UID" -f '^sleep 931$'
    local outside
    outside=$(pgrep -u "$TEST_UID" -f '^sleep 931$' | head -n 1)
    run ush "srun -w node1 -o '/proc/$outside/root/var/tmp/e2e-escape-%u' echo written"
    run nsenter -t "$(slurmd_pid node1)" -m -- sh -c 'ls /var/tmp/e2e-escape-* 2>/dev/null'
    assert_output ''
}
