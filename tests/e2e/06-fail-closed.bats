#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# When the jail cannot be entered, no task runs (not on the host, not in the
# jail), the user sees a "chroot:" error, and the next job works again.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    setup_job_test
    CANARY=e2e-canary-$BATS_SUITE_TEST_NUMBER-$$
    # The task would leave this canary behind if it ran anywhere.
    TASK="touch /tmp/$CANARY $HOME_IN_JAIL/$CANARY; echo TASK-RAN"
}

teardown() {
    set_plugstack "$PLUGSTACK_LINE"
    chown root:root "$JAIL"
    chmod 0755 "$JAIL"
    rm -f "$HOST_HOME/e2e-plant"
}

assert_task_did_not_run() {
    refute_output --partial TASK-RAN
    [ ! -e "/tmp/$CANARY" ]
    [ ! -e "$HOST_HOME/$CANARY" ]
    [ ! -e "$JAIL/tmp/$CANARY" ]
    local n
    for n in "$STATE"/nodes/*; do [ ! -e "$n/tmp/$CANARY" ]; done
}

# After the failure is fixed, jobs on both nodes run in the jail again.
assert_cluster_recovers() {
    teardown
    run ush "srun -N2 $PROBE"
    assert_success
    assert_in_jail 2
}

# srun_must_fail_at_entry WHAT: the step fails on the nodes with the
# plugin's one-line error naming the step and WHAT.
srun_must_fail_at_entry() {
    run ush "srun -N2 sh -c '$TASK'"
    assert_failure
    assert_output --regexp "chroot: StepId=[0-9]+\.[0-9]+: .*$1"
    assert_task_did_not_run
}

@test "missing jail: srun fails with the plugin's error, no task runs" {
    set_plugstack "required chroot.so jail=/mnt/e2e-missing-jail"
    srun_must_fail_at_entry /mnt/e2e-missing-jail
    assert_cluster_recovers
}

@test "missing jail: sbatch job fails and the error lands in its output file" {
    set_plugstack "required chroot.so jail=/mnt/e2e-missing-jail"
    run ush "sbatch --wait -o $T/fail.out --wrap '$TASK'"
    assert_failure
    run cat "$HOST_HOME/$T/fail.out"
    assert_output --regexp "chroot: StepId=[0-9]+\.batch: .*/mnt/e2e-missing-jail"
    assert_task_did_not_run
    assert_cluster_recovers
}

@test "jail owned by the user: refused, no task runs" {
    chown "$TEST_UID" "$JAIL"
    jail_changed_elsewhere
    srun_must_fail_at_entry /mnt/jail
    assert_cluster_recovers
}

@test "group-writable jail: refused, no task runs" {
    chmod 0775 "$JAIL"
    jail_changed_elsewhere
    srun_must_fail_at_entry /mnt/jail
    assert_cluster_recovers
}

@test "unknown plugstack key: srun refuses and names the key, no task runs" {
    set_plugstack "required chroot.so jail=/mnt/jail e2e_bogus=1"
    run ush "srun -N2 sh -c '$TASK'"
    assert_failure
    assert_output --partial chroot:
    assert_output --partial e2e_bogus
    assert_task_did_not_run
    assert_cluster_recovers
}

@test "malformed plugstack value (relative jail path): refused, no task runs" {
    set_plugstack "required chroot.so jail=mnt/jail"
    run ush "srun -N2 sh -c '$TASK'"
    assert_failure
    assert_output --partial chroot:
    assert_output --partial mnt/jail
    assert_task_did_not_run
    assert_cluster_recovers
}

@test "missing bind source: refused, no task runs" {
    set_plugstack "required chroot.so jail=/mnt/jail bind=/e2e-missing-src:/opt"
    srun_must_fail_at_entry /e2e-missing-src
    assert_cluster_recovers
}

# plant_reach_mounts NODE: the node's mounts where a bind through the planted
# link could land: its /etc, the jail and the homes in it. The plugin's
# prepared namespace (state/ns) is rebuilt when the settings change, and
# jobs' namespaces come and go: both are left out.
plant_reach_mounts() {
    node_mounts_but_namespaces "$1" | awk '$1 ~ "^/(etc|home)(/|$)" || index($1, "/mnt/jail") == 1'
}

@test "symlink planted by the user at a bind target (-> jail /etc): refused, jail untouched" {
    local before
    before=$(plant_reach_mounts node1)
    assert [ -n "$before" ] # the node's /etc/slurm, /mnt/jail and /home binds at least
    ush "ln -s /etc $HOME_IN_JAIL/e2e-plant"
    set_plugstack "required chroot.so jail=/mnt/jail bind=/etc/slurm:$HOME_IN_JAIL/e2e-plant:ro"
    srun_must_fail_at_entry e2e-plant
    # Nothing was mounted over the jail's /etc, on the node or on the host.
    [ -f "$JAIL/etc/passwd" ]
    assert_equal "$(plant_reach_mounts node1)" "$before"
    run findmnt -rn -o TARGET "$JAIL/etc"
    assert_output ''
    assert_cluster_recovers
}

@test "symlink planted by the user at a bind target (-> host path): refused" {
    ush "ln -s $STATE $HOME_IN_JAIL/e2e-plant"
    set_plugstack "required chroot.so jail=/mnt/jail bind=/etc/slurm:$HOME_IN_JAIL/e2e-plant:ro"
    srun_must_fail_at_entry e2e-plant
    run findmnt -rn -o TARGET "$STATE"
    assert_output ''
    assert_cluster_recovers
}
