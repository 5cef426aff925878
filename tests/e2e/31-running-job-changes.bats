#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A running job's later steps are as fresh as a new job: a bind source
# unmounted on the node, a bind= line removed from plugstack.conf or a new
# /proc on the node reaches the job's next step (srun --jobid --overlap),
# which keeps the job's processes and its /tmp.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    load user_code
    setup_user_code_test
}

teardown() {
    set_plugstack "$PLUGSTACK_LINE"
    cancel_test_jobs
    wait_until 60 node_is_idle node1 || true
    if [ -n "${PROC_OVER:-}" ]; then on_node node1 umount /proc 2>/dev/null || true; fi
    if [ -n "${BIND_SRC:-}" ]; then
        on_node node1 umount "$BIND_SRC" 2>/dev/null || true
        rm -rf "$BIND_SRC"
    fi
    remove_drops
}

# start_job: a batch job on node1 that writes /tmp/keep in its /tmp and
# sleeps; JOB is its id once its batch step runs.
start_job() {
    run ush "sbatch --parsable -w node1 -o $T/job.out --wrap 'echo kept >/tmp/keep; echo started; exec sleep 301'"
    assert_success
    JOB=$output
    wait_until 60 grep -qsx started "$HOST_HOME/$T/job.out"
}

# step CMD: a later step of JOB on node1.
step() { run ush "srun --jobid=$JOB --overlap -w node1 sh -c '$1'"; }

# What a later step must still see of the job: its /tmp, its init as PID 1
# and the batch step's sleep (the same PID namespace).
# shellcheck disable=SC2016 # expanded in the task
KEPT='cat /tmp/keep; cat /proc/1/comm; for p in /proc/[0-9]*; do tr "\0" " " <$p/cmdline; echo; done | grep -c "^sleep 301"'
assert_job_kept() {
    assert_line kept
    assert_line sjail-job-init
    assert_line 1
}

@test "a bind source unmounted on the node while a job runs: the job's next step no longer reads it" {
    BIND_SRC=/var/lib/e2e-running-src-$$
    install -d -m 0755 "$BIND_SRC"
    on_node node1 mount -t tmpfs -o size=64k,mode=0755 e2e-revoked "$BIND_SRC"
    on_node node1 sh -c "echo e2e-secret >$BIND_SRC/secret"
    set_plugstack "required chroot.so jail=/mnt/jail bind=$BIND_SRC:/opt:ro"
    start_job
    step "cat /opt/secret"
    assert_success
    assert_line e2e-secret
    on_node node1 umount "$BIND_SRC"
    step "ls -A /opt; $KEPT"
    assert_success
    refute_output --partial secret
    assert_job_kept
}

@test "a bind= line removed while a job runs: the job's next step no longer sees the bind" {
    BIND_SRC=/var/lib/e2e-running-dir-$$
    install -d -m 0755 "$BIND_SRC"
    echo e2e-secret >"$BIND_SRC/secret"
    set_plugstack "required chroot.so jail=/mnt/jail bind=$BIND_SRC:/opt:ro"
    start_job
    step "cat /opt/secret"
    assert_success
    assert_line e2e-secret
    set_plugstack "$PLUGSTACK_LINE"
    step "ls -A /opt; $KEPT"
    assert_success
    refute_output --partial secret
    assert_job_kept
}

# The super options of the /proc a job's task sees.
# shellcheck disable=SC2016 # expanded in the task
PROC_OPTS='awk "\$5 == \"/proc\" { print \$NF }" /proc/self/mountinfo'

@test "a /proc with hidepid on the node: the next job's and a running job's next step's /proc have it" {
    if on_node node1 findmnt -rn -o PROPAGATION --mountpoint /proc | grep -q shared; then
        echo "node1's /proc propagates to the host here; this test mounts over it" >&2
        return 1
    fi
    start_job
    step "$PROC_OPTS"
    assert_success
    refute_output --partial hidepid=invisible
    PROC_OVER=1
    on_node node1 mount -t proc -o hidepid=invisible,nosuid,nodev,noexec proc /proc
    run ush "srun -w node1 sh -c '$PROC_OPTS'"
    assert_success
    assert_output --partial hidepid=invisible
    step "$PROC_OPTS; $KEPT"
    assert_output --partial hidepid=invisible
    # The job's /tmp and its batch step's sleep are still there; its init,
    # root's, is now hidden from the user.
    assert_line kept
    assert_line 1
    assert_output --partial "/proc/1/comm: No such file or directory"
}
