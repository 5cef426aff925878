#!/usr/bin/env bats
# One root for the whole cluster, but /tmp stays node-local.

setup() {
    load helpers
    load_assertions
}

@test "a file job A writes on node1 is read by job B on node2" {
    local f=/var/tmp/e2e-shared-$$
    run ush "srun -w node1 sh -c 'echo written-on-\$(hostname) > $f' && srun -w node2 cat $f"
    assert_success
    assert_output written-on-node1
    assert_equal "$(cat "$JAIL$f")" written-on-node1
    rm -f "$JAIL$f"
}

@test "/tmp is node-local: node2 does not see node1's file, node1 keeps it" {
    local f=e2e-tmp-$$
    run ush "srun -w node1 sh -c 'echo node1-data > /tmp/$f' &&
             srun -w node2 sh -c 'test -e /tmp/$f && echo SEEN-ON-NODE2; echo node2-done' &&
             srun -w node1 cat /tmp/$f"
    assert_success
    refute_output --partial SEEN-ON-NODE2
    assert_line node2-done
    assert_line node1-data
    # It lives in node1's own tmp, not in the jail's /tmp and not on the host.
    [ -f "$STATE/nodes/node1/tmp/$f" ]
    [ ! -e "$STATE/nodes/node2/tmp/$f" ]
    [ ! -e "$JAIL/tmp/$f" ]
    [ ! -e "/tmp/$f" ]
    rm -f "$STATE/nodes/node1/tmp/$f"
}
