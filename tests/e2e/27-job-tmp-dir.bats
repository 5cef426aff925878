#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# job_tmp=DIR: each job's /tmp is a directory of its own below a node-local
# DIR, and nothing of it outlives the job, whatever the user left in it
# (nested and closed directories, files of the user's, links planted to be
# followed): not after the job, not after a slurmd restart. The cluster is
# restarted with job_tmp=DIR for this file and restored afterwards.

# In the node: below chroot.so's node-local state directory (root's, 0700).
JOB_TMP=/run/slurm-jail/jobtmp

setup_file() {
    load helpers
    use_cluster SLURM_JAIL_LOCAL_PLUGSTACK_EXTRA="job_tmp=$JOB_TMP"
}


setup() {
    load helpers
    setup_job_test
}

teardown() {
    cancel_test_jobs
}

# host_job_tmp NODE: the node's job_tmp= directory, seen from the host.
host_job_tmp() { echo "$STATE/nodes/$1/run/jobtmp"; }

@test "job_tmp=DIR: the job's directory, with all the user left in it, goes with the job" {
    ush "mkdir -p $T/keep && echo kept >$T/keep/file"
    # What a user leaves in /tmp to make its removal fail or go astray.
    cat >"$HOST_HOME/$T/fill.sh" <<SCRIPT
#!/bin/sh
mkdir -p /tmp/a/b/c && echo data >/tmp/a/b/c/f
ln -s $HOME_IN_JAIL/$T/keep /tmp/link-dir
ln -s $HOME_IN_JAIL/$T/keep/file /tmp/a/link-file
mkdir -p /tmp/closed/inner && echo x >/tmp/closed/inner/f && chmod 000 /tmp/closed/inner /tmp/closed
mkfifo /tmp/fifo && : >/tmp/empty
echo ready
exec sleep 921
SCRIPT
    chown "$TEST_UID:$TEST_UID" "$HOST_HOME/$T/fill.sh"
    chmod 0755 "$HOST_HOME/$T/fill.sh"
    run ush "sbatch --parsable -w node1 -o $T/job.out $T/fill.sh"
    assert_success
    local job=$output dir
    dir=$(host_job_tmp node1)/job-$job
    wait_until 30 grep -q ready "$HOST_HOME/$T/job.out"
    # The user's files are in the job's own directory on the node.
    [ "$(stat -c %u "$dir/a/b/c/f")" = "$TEST_UID" ]
    [ "$(stat -c %a "$dir/closed")" = 0 ]
    [ -L "$dir/link-dir" ]
    run ush "scancel $job"
    assert_success
    wait_until 30 test ! -e "$(job_state_dir node1 "$job")"
    wait_until 10 test ! -e "$dir"
    # The links were removed, not followed.
    assert_equal "$(cat "$HOST_HOME/$T/keep/file")" kept
    # The next job's /tmp is empty.
    run ush "srun -w node1 sh -c 'ls -A /tmp | grep -c . || true'"
    assert_success
    assert_output 0
}

# A job whose /tmp holds a tree deeper than a remover could hold open one
# directory at a time (each level closed to its owner's group and others):
# its end removes it, the epilog does not fail and the node is not drained.
@test "job_tmp=DIR: a tree 5000 directories deep goes with the job, and the node stays up" {
    # perl's chdir is one relative step; a shell's cd walks its whole $PWD
    # (minutes at this depth).
    cat >"$HOST_HOME/$T/deep.sh" <<'SCRIPT'
#!/bin/sh
cd /tmp && perl -e 'for my $i (1 .. 5000) { mkdir("d", 0700) && chdir("d") or die "level $i: $!\n"; open(my $f, ">", "f") or die; print $f "$i\n"; }' || exit 1
echo ready
SCRIPT
    chown "$TEST_UID:$TEST_UID" "$HOST_HOME/$T/deep.sh"
    chmod 0755 "$HOST_HOME/$T/deep.sh"
    run ush "sbatch --parsable -w node1 -o $T/job.out $T/deep.sh"
    assert_success
    local job=$output
    wait_until 60 grep -q ready "$HOST_HOME/$T/job.out"
    wait_until 30 test ! -e "$(job_state_dir node1 "$job")"
    wait_until 30 test ! -e "$(host_job_tmp node1)/job-$job"
    # A failed epilog ("Epilog error") would drain the node.
    wait_until 20 bash -c "'$LC' run -- sinfo -h -n node1 -o %t | grep -qx idle"
    run ush "scontrol show node node1"
    refute_output --partial "Reason="
}

@test "job_tmp=DIR: what a crashed node left in DIR goes when slurmd starts" {
    # As a node crash leaves it: a job's directory, full of the user's
    # files, without any state of the job.
    local dir left
    dir=$(host_job_tmp node1)
    left=$dir/job-99991
    install -d -m 1777 "$left"
    mkdir -p "$left/a/b" "$left/closed"
    echo x >"$left/a/b/f"
    echo y >"$left/closed/f"
    ln -s / "$left/root-link"
    chown -R -h "$TEST_UID:$TEST_UID" "$left/a" "$left/closed" "$left/root-link"
    chmod 000 "$left/closed"
    restart_slurmd node1
    wait_until 30 test ! -e "$left"
    [ -d "$dir" ]
    [ -e /etc/hostname ]
}
