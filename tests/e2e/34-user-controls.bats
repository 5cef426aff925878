#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# What a user controls steers nothing of root's and takes nothing from
# another user, tried as a hostile user would: a path in the step's
# environment that slurmstepd's PMIx server would make as root
# (SLURM_PMIX_TMPDIR), a name taken in /var/tmp (one directory for the
# whole cluster in the shared jail), and files left in the MPS daemon's
# /dev/shm (gpu_mps_shm=). A FUSE daemon that never answers is tried in
# 33-containers (it needs the nodes' /dev/fuse open to users).

load helpers

setup_file() { use_cluster; }

setup() {
    setup_job_test
}

teardown() {
    cancel_both_users_jobs
    set_plugstack "$PLUGSTACK_LINE"
    rm -rf "$STATE/nodes/node2/run/mps-shm" "$JAIL/var/tmp/e2e-shared" "$HOST_HOME/e2e-link"
}

# none_of PATH...: none of them exists.
none_of() {
    local path
    for path in "$@"; do
        [ ! -e "$path" ] || return 1
    done
}

# ---- SLURM_PMIX_TMPDIR ----

# mpi/pmix makes VALUE/spmix_appdir_UID_JOB.STEP as root and gives it to the
# user. Each target: the jail's /etc (every node's), another user's home
# through a link planted in one's own (Slurm refuses a link only as the last
# name), and the node's /run (no user may write it).
@test "hostile: SLURM_PMIX_TMPDIR makes no directory of root's in the jail's /etc, in another user's home through a planted link, or in the node's /run" {
    if ! ush "srun --mpi=list" 2>&1 | grep -qw pmix; then
        skip "this cluster's Slurm has no mpi/pmix plugin (Debian's 26.05 builds none): nothing reads SLURM_PMIX_TMPDIR"
    fi
    ln -sfn "/home/$OTHER_USER" "$HOST_HOME/e2e-link"
    chown -h "$TEST_UID:$TEST_UID" "$HOST_HOME/e2e-link"
    local dir
    for dir in /etc "$HOME_IN_JAIL/e2e-link/." /run; do
        run ush "SLURM_PMIX_TMPDIR=$dir srun --mpi=pmix -w node1 sh -c 'ls -d $dir/spmix_appdir_* /tmp/spmix_appdir_* 2>/dev/null; printenv SLURM_PMIX_TMPDIR || echo unset'"
        assert_success
        # PMIx keeps working, in the job's own /tmp (slurm.conf's TmpFS).
        assert_line --regexp "^/tmp/spmix_appdir_${TEST_UID}_[0-9]+\.0$"
        assert_line unset
        refute_output --partial "$dir/spmix_appdir_"
    done
    [ -z "$(find "$JAIL/etc" "$JAIL/home/$OTHER_USER" -maxdepth 1 -name 'spmix_appdir_*')" ]
    run grep -h "chroot: .*SLURM_PMIX_TMPDIR=/etc removed from the step's environment" "$STATE/logs/slurmd-node1.log"
    assert_success
}

# ---- /var/tmp ----

@test "a job's /var/tmp is its /tmp: not the shared jail's, not another job's on the node, gone with the job" {
    # --quiet: srun's own notes (a job waiting for the last one's end on a
    # loaded machine) are not the task's output.
    run ush "srun --quiet -w node1 sh -c 'echo mine >/var/tmp/e2e-var-tmp && cat /tmp/e2e-var-tmp && stat -f -c %T /var/tmp'"
    assert_success
    assert_output "mine
tmpfs"
    [ ! -e "$JAIL/var/tmp/e2e-var-tmp" ]
    run ush "srun --quiet -w node1 ls -A /var/tmp"
    assert_success
    assert_output ''
}

# A name another user's tool expects in /var/tmp (Charliecloud keeps
# /var/tmp/USER.ch), taken while the taker's job runs on the same node.
@test "hostile: a name taken in /var/tmp is taken in the taker's job only; the other user's job on the node has its own" {
    local taker
    taker=$(ush "sbatch --parsable -w node1 -o /dev/null --wrap 'mkdir -m 0700 /var/tmp/$OTHER_USER.ch && exec sleep 304'")
    wait_until 30 pgrep -u "$TEST_UID" -fx "sleep 304"
    run ush_other "srun -w node1 sh -c 'mkdir /var/tmp/$OTHER_USER.ch && echo usable >/var/tmp/$OTHER_USER.ch/f && cat /var/tmp/$OTHER_USER.ch/f'"
    assert_success
    assert_output usable
    [ ! -e "$JAIL/var/tmp/$OTHER_USER.ch" ]
    ush "scancel $taker"
}

@test "var_tmp=jail: jobs share the jail's own /var/tmp, as before" {
    set_plugstack "$PLUGSTACK_LINE var_tmp=jail"
    run ush "srun -w node1 sh -c 'echo shared >/var/tmp/e2e-shared'"
    assert_success
    assert_equal "$(cat "$JAIL/var/tmp/e2e-shared")" shared
    set_plugstack "$PLUGSTACK_LINE var_tmp=sometimes"
    run ush "srun -w node1 true"
    assert_failure
    assert_output --partial "var_tmp=sometimes is not a choice; write var_tmp=job"
}

# ---- the MPS daemon's /dev/shm ----

# node2 has the daemon's directory (as in 20-gpu), with a file of the
# server's (root's). The test user's files stay while one of their jobs
# runs on the node and go with the last; another user's stay while theirs
# runs; the server's stay.
@test "gpu_mps_shm=DIR: what a user leaves there goes when their last job on the node ends; the daemon's and a running job's stay" {
    local shm=/run/slurm-jail/mps-shm host_shm=$STATE/nodes/node2/run/mps-shm mine other
    install -d -m 1777 "$host_shm"
    echo "from the MPS server" >"$host_shm/cuda.shm.server"
    set_plugstack "$PLUGSTACK_LINE gpu_mps_shm=$shm"
    # slurmd ends jobs with the settings it read when it started.
    restart_slurmd node2
    mine=$(ush "sbatch --parsable -w node2 -o /dev/null --wrap 'echo a >/dev/shm/user-first && exec sleep 305'")
    other=$(ush_other "sbatch --parsable -w node2 -o /dev/null --wrap 'echo o >/dev/shm/other-user && exec sleep 306'")
    wait_until 30 test -e "$host_shm/user-first"
    wait_until 30 test -e "$host_shm/other-user"
    # A job that fills the directory and ends: its files stay while the
    # user's first job runs.
    run ush "srun -w node2 sh -c 'head -c 1048576 /dev/zero >/dev/shm/user-filled'"
    assert_success
    [ -e "$host_shm/user-filled" ]
    ush "scancel $mine"
    wait_until 30 none_of "$host_shm/user-first" "$host_shm/user-filled"
    [ -e "$host_shm/other-user" ]
    [ -e "$host_shm/cuda.shm.server" ]
    ush_other "scancel $other"
    wait_until 30 test ! -e "$host_shm/other-user"
    assert_equal "$(cat "$host_shm/cuda.shm.server")" "from the MPS server"
    set_plugstack "$PLUGSTACK_LINE"
    restart_slurmd node2
}
