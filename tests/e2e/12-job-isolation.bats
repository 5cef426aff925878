#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Each job has its own PID and IPC namespaces, /tmp and /dev/shm inside the
# shared jail: it sees no other job, no process of the node, and leaves nothing behind.

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
    pkill -u "$TEST_UID" -f 'sleep 91[0-9]$' || true
}

# wait_for_file PATH: a job wrote it (through the jail's home on the host).
wait_for_file() { wait_until 30 test -s "$1"; }

# no_process_in_pidns INODE: no process on the machine is in that PID namespace.
no_process_in_pidns() {
    local p
    for p in /proc/[0-9]*; do
        if [ "$(stat -L -c %i "$p/ns/pid" 2>/dev/null)" = "$1" ]; then
            echo "pid ${p#/proc/} ($(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)) is in the job's PID namespace" >&2
            return 1
        fi
    done
}

# write_script NAME: stdin becomes the user's script $T/NAME.
write_script() {
    cat >"$HOST_HOME/$T/$1"
    chown "$TEST_UID:$TEST_UID" "$HOST_HOME/$T/$1"
    chmod 0755 "$HOST_HOME/$T/$1"
}

@test "a job sees no other user's job, no process of its user outside the jail, no slurmd" {
    run ush_other "sbatch --parsable -w node1 -o /dev/null --wrap 'exec sleep 911'"
    assert_success
    local other_job=$output
    wait_until 30 pgrep -u "$OTHER_UID" -f '^sleep 911$'
    as_user_on_node node1 sleep 912
    wait_until 10 pgrep -u "$TEST_UID" -f '^sleep 912$'
    local outside slurmd
    outside=$(pgrep -u "$TEST_UID" -f '^sleep 912$')
    slurmd=$(slurmd_pid node1)
    run ush "srun -w node1 sh -c 'ps -eo pid=,user=,args=; echo ---;
        for p in $outside $slurmd; do
            test -e /proc/\$p && echo VIS\"\"IBLE-\$p;
            readlink /proc/\$p/root >/dev/null 2>&1 && echo RO\"\"OT-OF-\$p;
            ls /proc/\$p/root/ >/dev/null 2>&1 && echo LIST-RO\"\"OT-OF-\$p;
        done; echo checked'"
    assert_success
    assert_line checked
    # PID 1 is the job's own init; the task sees its own ps and nothing else.
    assert_line --regexp '^ *1 root +sjail-job-init'
    assert_line --regexp " $TEST_USER +ps -eo"
    refute_output --partial 'sleep 911'
    refute_output --partial 'sleep 912'
    refute_output --partial slurmd
    refute_output --partial slurmstepd
    refute_output --partial "$OTHER_USER"
    # (Spelt with empty quotes in the script, so that ps shows no match.)
    refute_output --partial VISIBLE-
    refute_output --partial ROOT-OF-
    # Every process in the task's view is the job's: its init, the extern
    # step's sleep (PrologFlags=Contain), and the task's own sh and ps.
    run grep -Ev "^ *1 root +sjail-job-init *\$|^ *[0-9]+ root +sleep 100000000\$|^ *[0-9]+ $TEST_USER +(/usr/bin/sh -c |ps -eo )" \
        <<<"$(sed '/^---$/,$d' <<<"$output")"
    assert_output ''

    ush_other "scancel $other_job"
}

@test "two jobs of one user on one node have separate /tmp and /dev/shm" {
    run ush "sbatch --parsable -w node1 -o $T/first.out --wrap '
        echo first >/tmp/e2e-first; echo first >/dev/shm/e2e-first
        echo ready; exec sleep 913'"
    assert_success
    local first=$output
    wait_for_file "$HOST_HOME/$T/first.out"
    run ush "srun -w node1 sh -c 'ls -A /tmp /dev/shm; echo second >/tmp/e2e-second; echo listed'"
    assert_success
    assert_line listed
    refute_output --partial e2e-first
    # The first job's files are still there, in its own /tmp and /dev/shm,
    # and the second job's file is not.
    run ush "srun --jobid=$first --overlap sh -c 'cat /tmp/e2e-first /dev/shm/e2e-first; ls -A /tmp'"
    assert_success
    assert_output "first
first
e2e-first"
    # Nothing reached the node's or the jail's shared /tmp.
    [ ! -e "$STATE/nodes/node1/tmp/e2e-first" ]
    [ ! -e "$JAIL/tmp/e2e-first" ]
    [ ! -e /tmp/e2e-first ]
}

@test "a job's /tmp lives in its namespaces on the node and is gone with the job" {
    run ush "sbatch --parsable -w node1 -o $T/job.out --wrap '
        echo kept >/tmp/e2e-kept; echo ready; exec sleep 914'"
    assert_success
    local job=$output dir
    dir=$(job_state_dir node1 "$job")
    wait_for_file "$HOST_HOME/$T/job.out"
    # From the node's side: the job's state, and its /tmp through its view.
    [ -d "$dir" ]
    run in_job_view node1 "$job" cat /tmp/e2e-kept
    assert_success
    assert_output kept
    local pidns
    pidns=$(job_ns_inode node1 "$job" pid)
    run ush "scancel $job"
    assert_success
    wait_until 30 test ! -e "$dir"
    # No process is left in the job's PID namespace.
    wait_until 10 no_process_in_pidns "$pidns"
}

# ipc_count: how many System V IPC objects (shared memory segments, message
# queues, semaphore sets) the caller's IPC namespace holds.
ipc_count='ipcs -m -q -s | grep -c "^0x" || true'

@test "System V IPC is the job's own: its later steps see it, another job and the node do not, and it goes with the job" {
    # The node's own IPC namespace (slurmd's) is this machine's on the local
    # cluster: what others keep there is counted before the job.
    local node_before
    node_before=$(nsenter --target "$(slurmd_pid node1)" --ipc sh -c "$ipc_count")
    run ush "sbatch --parsable -w node1 -o $T/ipc.out --wrap '
        ipcmk -M 33554432 -Q -S 1 >/dev/null && $ipc_count; echo ready; exec sleep 918'"
    assert_success
    local job=$output dir
    dir=$(job_state_dir node1 "$job")
    wait_until 30 grep -qx ready "$HOST_HOME/$T/ipc.out"
    run cat "$HOST_HOME/$T/ipc.out"
    assert_output "3
ready"
    run ush "srun --jobid=$job --overlap -w node1 sh -c '$ipc_count'"
    assert_success
    assert_output 3
    run ush_other "srun -w node1 sh -c '$ipc_count'"
    assert_success
    assert_output 0
    # The node's own IPC namespace holds none of them.
    run nsenter --target "$(slurmd_pid node1)" --ipc sh -c "$ipc_count"
    assert_output "$node_before"
    run ush "scancel $job"
    assert_success
    wait_until 30 test ! -e "$dir"
    # A later job of the same user on the node finds nothing left.
    run ush "srun -w node1 sh -c '$ipc_count'"
    assert_success
    assert_output 0
}

@test "a second step (srun --overlap) sees the first step's process and can signal it" {
    write_script steps.sh <<'SCRIPT'
#!/bin/sh
srun -n1 sleep 915 &
first=$!
for i in $(seq 50); do srun --overlap -n1 pgrep -x sleep >/dev/null && break; sleep 0.2; done
srun --overlap -n1 sh -c 'ps -eo args= | grep -c "^[^ ]*sleep 915$"; pkill -TERM -f "^[^ ]*sleep 915$" && echo signalled'
wait $first
echo "first-step-ended rc=$?"
SCRIPT
    run ush "sbatch --wait --time=2 -w node1 -o $T/steps.out $T/steps.sh"
    assert_success
    run cat "$HOST_HOME/$T/steps.out"
    assert_line 1
    assert_line signalled
    assert_line --regexp '^first-step-ended rc=[0-9]+$'
    run pgrep -u "$TEST_UID" -f 'sleep 915$'
    assert_failure
}

@test "scancel ends the job's PID namespace: its init and every task are gone" {
    run ush "sbatch --parsable -w node1 -o $T/cancel.out --wrap 'sleep 916 & sleep 917 & echo ready; wait'"
    assert_success
    local job=$output
    wait_for_file "$HOST_HOME/$T/cancel.out"
    wait_until 10 pgrep -u "$TEST_UID" -f '^sleep 917$'
    local init
    init=$(cut -d' ' -f1 "$(job_state_dir node1 "$job")/init")
    [ -n "$init" ] && kill -0 "$init"
    run ush "scancel $job"
    assert_success
    wait_until 30 bash -c "! pgrep -u $TEST_UID -f '^sleep 91[67]$'"
    wait_until 30 bash -c "! kill -0 $init 2>/dev/null"
}

# What the OOM killer could do: the job's init is killed while its
# allocation lives on (salloc --no-shell: no batch script in the job's PID
# namespace to end the job with it). The next step cannot join a dead PID
# namespace: it fails at once with one line that says why, and the job's
# leftovers on the node go.
@test "a job whose init was killed: its next step fails with one line naming the init, and its leftovers go" {
    run ush "salloc --no-shell -N1 -w node1 --time=5 2>&1"
    assert_success
    local job dir init
    job=$(sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p' <<<"$output")
    [ -n "$job" ] || fail "no job allocation in: $output"
    run ush "srun --jobid=$job -w node1 true"
    assert_success
    dir=$(job_state_dir node1 "$job")
    init=$(cut -d' ' -f1 "$dir/init")
    [ -n "$init" ] || fail "no init recorded in $dir/init"
    kill -KILL "$init"
    # Until its parent reaps it, a killed init waits in /proc as a zombie.
    wait_until 10 bash -c "! grep -qv ') Z ' /proc/$init/stat 2>/dev/null"
    run ush "srun --jobid=$job -w node1 true"
    ush "scancel $job" || true
    assert_failure
    assert_output --partial "ended on this node before this step: its init (pid $init)"
    assert_output --partial "Requeue or resubmit the job"
    refute_output --partial "Cannot allocate memory"
    wait_until 30 test ! -e "$dir"
}
