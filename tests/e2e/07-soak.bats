#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# 100 short jobs in a row, 64 tasks at once across both nodes, then 300 batch
# jobs (an array). Afterwards no job state, mount, process or slurmd file
# descriptor is left over: a leak of one per job shows at these counts. The
# benchmarks' full run checks the same after 1000 jobs (bench/README.md).
# Timings are printed as TAP comments; they are measured, never asserted.

setup_file() {
    load helpers
    use_cluster
    # Baseline, taken once before the soak, after a step on both nodes and
    # its job's end: each node's kept namespace is then the one of the
    # cluster's settings (a former file's logins or steps with other
    # settings rebuild it), and no job's namespaces are there.
    ush "srun -N2 true" >&2
    wait_until 30 bash -c "[ -z \"\$(find $STATE/nodes/node*/run/jobs -mindepth 1 -maxdepth 1 2>/dev/null)\" ]"
    local n
    host_jail_mounts >"$BATS_FILE_TMPDIR/host-mounts"
    for n in node1 node2; do
        soak_mounts "$n" >"$BATS_FILE_TMPDIR/mounts-$n"
        slurmd_fds "$n" >"$BATS_FILE_TMPDIR/fds-$n"
    done
}

setup() {
    load helpers
    load_assertions
}

# soak_mounts NODE: the node's mount table, each namespace handle's inode
# left out: the node's kept namespace is rebuilt, as it must be, when a file
# it binds is replaced on the node (the host's /etc/resolv.conf, which a DHCP
# client renews by rename), and its handle is then another. A handle or mount
# more or less still shows.
soak_mounts() {
    node_mounts "$1" | sed -E 's/ nsfs\[([a-z]+):\[[0-9]+\]\]/ nsfs[\1:[N]]/'
}

@test "100 short jobs in a row all run in the jail" {
    local t0=$EPOCHREALTIME
    run ush 'for i in $(seq 100); do
                 srun -N1 -w node$((i % 2 + 1)) test -f /etc/slurm-jail-release || { echo "job $i failed"; exit 1; }
             done; echo all-100-done'
    printf '# soak: 100 sequential jobs took %s s\n' "$(elapsed_since "$t0")" >&3
    assert_success
    # srun may say a job waited for resources (a node still completing the
    # one before); every job's exit status was checked.
    assert_line all-100-done
    refute_output --partial failed
}

@test "64 tasks at once across 2 nodes all run in the jail" {
    local t0=$EPOCHREALTIME
    run ush "srun -N2 -n64 --ntasks-per-node=32 sh -c '$PROBE; sleep 2'"
    printf '# soak: one step of 64 concurrent tasks took %s s\n' "$(elapsed_since "$t0")" >&3
    assert_success
    assert_in_jail 64
    assert_equal "$(grep -c '^in-jail node1$' <<<"$output")" 32
    assert_equal "$(grep -c '^in-jail node2$' <<<"$output")" 32
}

@test "300 batch jobs (an array over both nodes) all run in the jail" {
    local t0=$EPOCHREALTIME
    run ush "sbatch --wait --array=0-299 -o /dev/null -e /dev/null --wrap 'test -f $MARKER'"
    printf '# soak: 300 array jobs took %s s\n' "$(elapsed_since "$t0")" >&3
    assert_success
    # sbatch --wait exits with the highest exit code of the array's tasks:
    # 0 means every one found the jail's marker. None is left in the queue.
    run ush "squeue -h -u $TEST_UID | wc -l"
    assert_output 0
}

@test "after the soak: no job's namespaces are left on the nodes" {
    wait_until 30 bash -c "[ -z \"\$(find $STATE/nodes/node*/run/jobs -mindepth 1 -maxdepth 1 2>/dev/null)\" ]"
    run job_state_entries
    assert_output ''
}

@test "after the soak: no stray processes, on the nodes or of the user" {
    wait_until 20 node_is_idle node1
    wait_until 20 node_is_idle node2
    run user_pids_in_cluster
    assert_output ''
}

@test "after the soak: node and host mount tables are unchanged" {
    assert_equal "$(host_jail_mounts)" "$(cat "$BATS_FILE_TMPDIR/host-mounts")"
    assert_equal "$(soak_mounts node1)" "$(cat "$BATS_FILE_TMPDIR/mounts-node1")"
    assert_equal "$(soak_mounts node2)" "$(cat "$BATS_FILE_TMPDIR/mounts-node2")"
}

@test "after the soak: slurmd's open file descriptors have not grown" {
    local n before after
    for n in node1 node2; do
        before=$(cat "$BATS_FILE_TMPDIR/fds-$n")
        after=$(slurmd_fds "$n")
        printf '# soak: slurmd on %s had %s fds before, %s after\n' "$n" "$before" "$after" >&3
        [ "$after" -le "$before" ]
    done
}
