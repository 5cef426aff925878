#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# One root for the whole cluster, but each job has its own /tmp on each node.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    load_assertions
}

@test "a file job A writes on node1 is read by job B on node2" {
    local f
    f=$(jail_dir "e2e-shared-$$")/f
    run ush "srun -w node1 sh -c 'echo written-on-\$(hostname) > $f' && srun -w node2 cat $f"
    assert_success
    assert_output written-on-node1
    assert_equal "$(cat "$JAIL$f")" written-on-node1
    rm -rf "${JAIL:?}/srv/e2e-shared-$$"
}

@test "/tmp is the job's own on each node: its steps share it, node2 and the next job do not see it" {
    make_test_dir
    local f=e2e-tmp-$$
    cat >"$HOST_HOME/$T/steps.sh" <<EOF
srun -N1 -w node1 sh -c 'echo node1-data > /tmp/$f'
srun -N1 -w node2 sh -c 'test -e /tmp/$f && echo SEEN-ON-NODE2; echo node2-done'
srun -N1 -w node1 cat /tmp/$f
EOF
    run ush "salloc -N2 bash $T/steps.sh"
    assert_success
    refute_output --partial SEEN-ON-NODE2
    assert_line node2-done
    assert_line node1-data
    # It lived in the job's own /tmp: not in the node's, the jail's or the host's.
    [ ! -e "$STATE/nodes/node1/tmp/$f" ]
    [ ! -e "$JAIL/tmp/$f" ]
    [ ! -e "/tmp/$f" ]
    run ush "srun -w node1 sh -c 'test -e /tmp/$f && echo STILL-THERE; echo next-job-done'"
    assert_success
    assert_output next-job-done
}
