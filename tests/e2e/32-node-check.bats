#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# slurm-jail-check on a compute node of the local cluster: what it says of
# the node's su, which slurmd runs for sbatch --get-user-env (10-no-host-root
# shows that su, through the nodes' stack, runs the user's login scripts in
# the jail), its PAM stack read as PAM runs it. Checked where the cluster
# runs this machine's Slurm release: inside another release's rootfs the
# check did not see the node's slurmd (not understood yet), so tests/compat
# does not run this file.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    load_assertions
}

@test "slurm-jail-check on a compute node whose su does not enter the jail: a problem, with the fix" {
    local check=$CLUSTER_BUILD/plugin/jail_check/slurm-jail-check ours=$BATS_TEST_TMPDIR/su
    [ -x "$check" ] || fail "$check is not built"
    # As root where node1's slurmd runs.
    run on_node node1 "$check"
    assert_line --regexp '^(no problems found|[0-9]+ problems?.*)$'
    refute_output --partial "does not enter the jail"
    refute_output --partial "before pam_slurm_jail.so"
    # The nodes' su stack (bound over their /etc/pam.d/su) rewritten in place
    # as this machine's own, Debian's.
    cp "$STATE/pam/su" "$ours"
    cp /etc/pam.d/su "$STATE/pam/su"
    run on_node node1 "$check"
    cp "$ours" "$STATE/pam/su"
    assert_failure
    assert_line "PROBLEM: /etc/pam.d/su does not enter the jail (no 'session required pam_slurm_jail.so' line) and slurmd runs on this node: its su for sbatch --get-user-env and --export=NONE runs the user's ~/.bash_profile on the node's own root -- fix: end the session stack of /etc/pam.d/su with 'session required pam_slurm_jail.so node=compute no_job=private' (see pam_slurm_jail(8), SU ON COMPUTE NODES)"
}

@test "slurm-jail-check on a compute node whose su can end its session stack, or start systemd --user, before the jail: a problem per line" {
    local check=$CLUSTER_BUILD/plugin/jail_check/slurm-jail-check ours=$BATS_TEST_TMPDIR/su
    local session=$STATE/pam/e2e-common-session
    cp "$STATE/pam/su" "$ours"
    # An included session file as Debian's common-session with libpam-systemd
    # (pam_systemd), planted here rather than read from this machine, and a
    # sufficient module, both before the jail's line.
    printf 'session required pam_unix.so\nsession optional pam_systemd.so\n' >"$session"
    sed "s|^\\(session *required *[^ ]*pam_slurm_jail.so\\)|@include $session\\nsession sufficient pam_permit.so\\n\\1|" \
        "$ours" >"$STATE/pam/su"
    run on_node node1 "$check"
    cp "$ours" "$STATE/pam/su"
    rm -f "$session"
    assert_failure
    refute_output --partial "does not enter the jail"
    assert_line --regexp "^PROBLEM: /etc/pam.d/su: 'session optional pam_systemd.so' \($session:2\) runs before pam_slurm_jail.so: it starts the user's systemd --user, with the user's own unit files, on the node's own root -- fix: put 'session required pam_slurm_jail.so node=compute no_job=private' before that line"
    assert_line --regexp "^PROBLEM: /etc/pam.d/su: 'session sufficient pam_permit.so' \(/etc/pam.d/su:[0-9]+\) can end su's session stack before pam_slurm_jail.so: su then runs the user's ~/.bash_profile on the node's own root -- fix: "
}
