#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# What the node's kept jail namespace shows follows the node: a bind source a
# user redirects with a symlink is refused, an unmounted or renamed source
# and a new plugin file rebuild the namespace, and a state directory users
# could write is refused without hanging any step.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    load user_code
    setup_user_code_test
    NODE_STATE=$STATE/nodes/node1/run # /run/slurm-jail on node1
}

teardown() {
    set_plugstack "$PLUGSTACK_LINE"
    if [ -n "${HOLDER:-}" ]; then kill "$HOLDER" 2>/dev/null || true; fi
    if [ -n "${BIND_SRC:-}" ]; then
        on_node node1 umount "$BIND_SRC" 2>/dev/null || true
        rmdir "$BIND_SRC"
    fi
    if [ -f "$BATS_TEST_TMPDIR/resolv.conf" ]; then restore_resolv_conf; fi
    if [ -n "${STATE_MODE:-}" ]; then
        local f
        for f in stamp lock; do
            # A reader blocked on a planted FIFO (an old plugin) is let go.
            if [ -p "$NODE_STATE/$f" ]; then
                timeout 2 sh -c "echo >'$NODE_STATE/$f'" || true
                rm -f "$NODE_STATE/$f"
            fi
        done
        chmod "$STATE_MODE" "$NODE_STATE"
        ctld_exec scancel -u "$TEST_UID" || true
    fi
    remove_drops
}

# The node jail namespace node1's jobs are made from, as mnt:[INODE], after a
# step on node1 (which rebuilds it when it is stale).
node_jail_ns() {
    ush "srun -w node1 true" >/dev/null 2>&1 || return 1
    on_node node1 stat -c 'mnt:[%i]' /run/slurm-jail/ns
}

@test "a bind source redirected by the user (a symlink to / in their home): refused, nothing of the host visible" {
    ush "mkdir $T/share && ln -s / $T/share/data"
    printf '#!/bin/sh\nfor p in %s %s; do if [ -e "/opt$p" ]; then echo "HOST-VISIBLE /opt$p"; fi; done\n' \
        "$HOST_ONLY" "$HOST_DROP" >"$HOST_HOME/$T/look.sh"
    chmod 0755 "$HOST_HOME/$T/look.sh"
    set_plugstack "required chroot.so jail=/mnt/jail bind=$HOME_IN_JAIL/$T/share/data:/opt:ro"
    run ush "srun -N2 sh -c '$HOME_IN_JAIL/$T/look.sh; $HOME_IN_JAIL/$T/task.sh'"
    assert_failure
    assert_output --regexp "chroot: StepId=[0-9]+\.0: task not started, jail entry failed: bind source $HOME_IN_JAIL/$T/share/data: $HOME_IN_JAIL/$T/share/data is a symlink below a directory users can write; the plugin never follows such links \(bind the real path\)"
    refute_output --partial HOST-VISIBLE
    assert_ran_nowhere
}

@test "a bind source unmounted on the node: the next job no longer sees what was mounted there" {
    BIND_SRC=/var/lib/e2e-bind-src-$$
    install -d -m 0755 "$BIND_SRC"
    set_plugstack "required chroot.so jail=/mnt/jail bind=$BIND_SRC:/opt:ro"
    on_node node1 mount -t tmpfs -o size=64k,mode=0755 e2e-revoked "$BIND_SRC"
    on_node node1 sh -c "echo e2e-secret >$BIND_SRC/secret"
    run ush "srun -w node1 cat /opt/secret"
    assert_success
    assert_line e2e-secret
    on_node node1 umount "$BIND_SRC"
    run ush "srun -w node1 sh -c 'ls -A /opt; cat $MARKER'"
    assert_success
    refute_output --partial secret
    assert_output --partial SLURM_JAIL_VERSION=
}

# The machine's /etc/resolv.conf is node1's (and node2's) too. On a plain
# node an update renames a new file over it; in a container (podman,
# Kubernetes) it is a bind mount of the runtime's file, which the runtime
# rewrites in place (a rename over a mount point fails with EBUSY).
resolv_conf_is_mounted() { on_node node1 findmnt -rn --mountpoint /etc/resolv.conf >/dev/null; }

# replace_resolv_conf FILE: FILE's content becomes /etc/resolv.conf's, as the
# node's own updater would put it there.
replace_resolv_conf() {
    if resolv_conf_is_mounted; then
        cat "$1" >/etc/resolv.conf
    else
        cp -p "$1" /etc/resolv.conf.e2e-new
        mv -f /etc/resolv.conf.e2e-new /etc/resolv.conf
    fi
}

restore_resolv_conf() {
    replace_resolv_conf "$BATS_TEST_TMPDIR/resolv.conf"
    rm -f "$BATS_TEST_TMPDIR/resolv.conf"
}

@test "/etc/resolv.conf replaced on the node (renamed over, or rewritten where it is a mount): the next job sees the new file" {
    if [ -L /etc/resolv.conf ]; then
        echo "this test replaces /etc/resolv.conf; here it is a link to $(readlink /etc/resolv.conf)" >&2
        return 1
    fi
    local line="# e2e-resolv-$$"
    run ush "srun -N2 cat /etc/resolv.conf"
    assert_success
    refute_output --partial "$line"
    cp -p /etc/resolv.conf "$BATS_TEST_TMPDIR/resolv.conf"
    cp -p /etc/resolv.conf "$BATS_TEST_TMPDIR/resolv.conf.new"
    echo "$line" >>"$BATS_TEST_TMPDIR/resolv.conf.new"
    replace_resolv_conf "$BATS_TEST_TMPDIR/resolv.conf.new"
    run ush "srun -N2 cat /etc/resolv.conf"
    assert_success
    assert_equal "$(grep -cxF "$line" <<<"$output")" 2
    restore_resolv_conf
    run ush "srun -N2 cat /etc/resolv.conf"
    assert_success
    refute_output --partial "$line"
}

# srun_quickly CMD: srun CMD on node1; a step that hangs is stopped after 60 s.
srun_quickly() {
    local t0=$SECONDS
    run ush "timeout 60 srun -w node1 $1"
    ELAPSED=$((SECONDS - t0))
}

@test "a state directory users can write, with a FIFO planted at its stamp: refused at once, no step hangs" {
    STATE_MODE=$(stat -c %a "$NODE_STATE")
    chmod 0777 "$NODE_STATE"
    rm -f "$NODE_STATE/stamp"
    mkfifo -m 0666 "$NODE_STATE/stamp"
    chown "$TEST_UID" "$NODE_STATE/stamp"
    srun_quickly "$T/task.sh"
    assert_failure
    assert_output --regexp "chroot: StepId=[0-9]+\.0: task not started, jail entry failed: state directory: /run/slurm-jail is writable by group or others; run: chmod go-w /run/slurm-jail"
    [ "$ELAPSED" -lt 30 ]
    assert_ran_nowhere
    wait_until 20 node_is_idle node1
}

@test "a FIFO at the stamp or the lock of a closed state directory: no step hangs" {
    STATE_MODE=$(stat -c %a "$NODE_STATE")
    rm -f "$NODE_STATE/stamp"
    mkfifo -m 0600 "$NODE_STATE/stamp"
    # A stamp that is not a regular file is no stamp: the namespace is rebuilt.
    srun_quickly "$T/task.sh"
    assert_success
    [ "$ELAPSED" -lt 30 ]
    assert_ran_in_jail task 1
    [ -f "$NODE_STATE/stamp" ]
    # The lock must be a regular file: refused, with the fix. What is left
    # of the first job on the node (its slurmstepd) may still take the lock
    # after srun returned, making it again between the two commands.
    wait_until 20 node_is_idle node1
    rm -f "$NODE_STATE/lock"
    mkfifo -m 0600 "$NODE_STATE/lock"
    srun_quickly "$T/task.sh"
    assert_failure
    assert_output --regexp "chroot: StepId=[0-9]+\.0: task not started, jail entry failed: open /run/slurm-jail/lock \(it must be a regular file; remove anything else there\): "
    [ "$ELAPSED" -lt 30 ]
    assert_ran_in_jail task 1
    wait_until 20 node_is_idle node1
}

@test "a new chroot.so installed by rename: the next step runs in a rebuilt namespace" {
    local before same after
    before=$(node_jail_ns)
    [[ $before == mnt:* ]]
    # Keep the old namespace alive, so the new one cannot reuse its inode.
    nsenter -t "$(slurmd_pid node1)" -m -- nsenter --mount=/run/slurm-jail/ns -- sleep 300 >/dev/null 2>&1 3>&- &
    HOLDER=$!
    same=$(node_jail_ns)
    assert_equal "$same" "$before"
    install -m 0755 "$STATE/plugins/chroot.so" "$STATE/plugins/chroot.so.new"
    mv -f "$STATE/plugins/chroot.so.new" "$STATE/plugins/chroot.so"
    install -m 0755 "$JAIL/usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so" "$JAIL/usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so.new"
    mv -f "$JAIL/usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so.new" "$JAIL/usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so"
    after=$(node_jail_ns)
    [[ $after == mnt:* ]]
    [ "$after" != "$before" ]
    run ush "srun -N2 $PROBE"
    assert_success
    assert_in_jail 2
}
