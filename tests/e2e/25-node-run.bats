#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# run=node (the default): each node's jail view has a /run of its own, a
# fresh tmpfs, so node runtime state is never shared through the jail, and
# the jail needs no /run/munge: the plugin makes that mount point itself.
# The one place users may write there, /run/lock, is each job's own.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    load_assertions
    LOCK=e2e-run-lock-$$
}

teardown() {
    ush "scancel -u $TEST_UID" >/dev/null 2>&1 || true
    if [ -n "${MUNGE_MOVED:-}" ]; then
        install -d -o root -g root -m 0755 "$JAIL/run/munge"
    fi
}

# A new chroot.so installed by rename: every node rebuilds its view at its
# next step (see 11-node-changes.bats).
reinstall_plugin() {
    local f
    for f in "$STATE/plugins/chroot.so" "$JAIL/usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so"; do
        install -m 0755 "$f" "$f.new"
        mv -f "$f.new" "$f"
    done
}

@test "a job's /run is a tmpfs of the node's own, root-owned, with the sticky /run/lock" {
    run ush "srun -N2 sh -c 'echo \$(hostname) \$(stat -f -c %T /run) \$(stat -c %a:%U /run /run/lock)' | sort"
    assert_success
    assert_output "node1 tmpfs 755:root 1777:root
node2 tmpfs 755:root 1777:root"
    run ush "srun -w node1 sh -c 'mkdir /run/mine 2>&1 || echo refused'"
    assert_line refused
}

@test "a file a job writes to /run/lock is the job's own: no other job, node or the jail sees it" {
    run ush "srun -w node1 sh -c 'echo from-node1 >/run/lock/$LOCK && cat /run/lock/$LOCK' &&
        srun -w node2 sh -c 'test -e /run/lock/$LOCK && echo SEEN-ON-NODE2; echo node2-done' &&
        srun -w node1 sh -c 'test -e /run/lock/$LOCK && echo SEEN-BY-THE-NEXT-JOB; echo node1-done'"
    assert_success
    assert_line from-node1
    refute_output --partial SEEN-ON-NODE2
    refute_output --partial SEEN-BY-THE-NEXT-JOB
    assert_line node2-done
    assert_line node1-done
    [ ! -e "$JAIL/run/lock/$LOCK" ]
    [ ! -e "/run/lock/$LOCK" ]
}

@test "a job that fills /run/lock does not stop another user's next job on the node" {
    make_test_dir
    run ush "sbatch --parsable -w node1 -o $T/fill.out --wrap '
        i=0; while true >/run/lock/fill-\$i; do i=\$((i + 1)); done 2>/dev/null
        echo filled \$i; exec sleep 923'"
    assert_success
    local filler=$output
    wait_until 60 grep -q filled "$HOST_HOME/$T/fill.out"
    printf '# node-run: the first job %s files in /run/lock\n' "$(cat "$HOST_HOME/$T/fill.out")" >&3
    # The other user's job, on the same node, while the filler holds it full.
    run ush_other "srun -w node1 sh -c 'echo mine >/run/lock/other-\$\$ && echo wrote; ls /run/lock | grep -c fill- || true'"
    assert_success
    assert_line wrote
    assert_line 0
    run ush "scancel $filler"
    assert_success
}

@test "a jail without /run/munge: srun inside sbatch still authenticates on both nodes" {
    make_test_dir
    rmdir "$JAIL/run/munge"
    MUNGE_MOVED=1
    reinstall_plugin
    cat >"$HOST_HOME/$T/job.sh" <<'EOF'
#!/bin/sh
srun -N2 sh -c 'test -S /run/munge/munge.socket.2 && echo "munge-ok-$(hostname)"'
EOF
    run ush "sbatch -N2 --wait -o $T/out $T/job.sh && sort $T/out"
    assert_success
    assert_line munge-ok-node1
    assert_line munge-ok-node2
    # The plugin made the mount point in each node's own /run, not in the jail.
    [ ! -e "$JAIL/run/munge" ]
}
