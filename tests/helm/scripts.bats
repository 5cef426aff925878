#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns and in-container scripts
# The chart's pod scripts (helm/slurm-cluster/files), run for real against
# fake scontrol/squeue/sinfo that record their arguments.

load helpers

setup() {
    files=$chart/files
    bin=$BATS_TEST_TMPDIR/bin
    mkdir -p "$bin"
    export PATH=$bin:$PATH CALLS=$BATS_TEST_TMPDIR/calls
    export SLURM_NODENAME=t-slurm-cluster-gpu-1 NODE_LIFECYCLE_POLL=0.1 NODE_LIFECYCLE_MUNGE_WAIT=0 NODE_LIFECYCLE_DOWN_WAIT=0 NODE_LIFECYCLE_CTLD_WAIT=0
    # The pod's slurm.conf (the ConfigMap) and where resume keeps its copy.
    export SLURM_CONF=$BATS_TEST_TMPDIR/etc/slurm.conf NODE_LIFECYCLE_START_CONF=$BATS_TEST_TMPDIR/run/slurm-jail-chart/slurm.conf
    mkdir -p "${SLURM_CONF%/*}"
    echo "ClusterName=as-started" >"$SLURM_CONF"
    : >"$CALLS"
    fake scontrol 0
    # sinfo: a node nobody drained (tests that need another answer replace it)
    printf '#!/bin/sh\necho "${SINFO_OUT:-idle|none}"\n' >"$bin/sinfo"
    chmod +x "$bin/sinfo"
    # squeue: prints a running job for the first $JOBS_FOR calls
    cat >"$bin/squeue" <<'SH'
#!/bin/sh
echo "squeue $*" >>"$CALLS"
n=$(grep -c '^squeue' "$CALLS")
[ "$n" -le "${JOBS_FOR:-0}" ] && echo 4242
exit 0
SH
    chmod +x "$bin/squeue"
}

# fake NAME RC [OUTPUT]: a command that logs its arguments and exits RC.
fake() {
    printf '#!/bin/sh\necho "%s $*" >>"$CALLS"\n%sexit %s\n' "$1" "${3:+echo \"$3\"; }" "$2" >"$bin/$1"
    chmod +x "$bin/$1"
}

@test "the scripts are shellcheck clean (POSIX sh)" {
    run shellcheck -s sh "$files/node-lifecycle" "$files/with-munge" "$files/helm-test"
    assert_success
}

@test "drain: drains this node with our reason and waits until its jobs are gone" {
    JOBS_FOR=3 run sh "$files/node-lifecycle" drain 60
    assert_success
    assert_output --partial "drained, no jobs left"
    run cat "$CALLS"
    assert_line --index 0 "scontrol update nodename=t-slurm-cluster-gpu-1 state=drain reason=slurm-jail-chart: pod terminating"
    assert_line --index 1 "squeue -h -w t-slurm-cluster-gpu-1 -t RUNNING,COMPLETING,CONFIGURING -o %i"
    run grep -c '^squeue' "$CALLS"
    assert_output 4 # three polls saw the job, the fourth saw none
}

@test "drain: gives up after the grace period while jobs still run" {
    SECONDS=0
    JOBS_FOR=100000 run sh "$files/node-lifecycle" drain 1
    assert_success
    assert_output --partial "jobs still running after 1s, stopping anyway: 4242"
    [ "$SECONDS" -le 4 ]
}

@test "drain: a failing scontrol (controller gone) does not block the pod" {
    fake scontrol 1
    run sh "$files/node-lifecycle" drain 600
    assert_success
    assert_output --partial "scontrol failed; not waiting for jobs"
    run grep -c '^squeue' "$CALLS"
    assert_output 0
}

@test "drain: a dynamic node's record is removed once its jobs are gone" {
    export SLURMD_DYNAMIC_CONF="Features=nodeset-gpu"
    JOBS_FOR=2 run sh "$files/node-lifecycle" drain 60
    assert_success
    assert_output --partial "drained, no jobs left"
    assert_output --partial "node record removed"
    run cat "$CALLS"
    assert_line --index 0 "scontrol update nodename=t-slurm-cluster-gpu-1 state=drain reason=slurm-jail-chart: pod terminating"
    assert_line "scontrol delete nodename=t-slurm-cluster-gpu-1"
    # removed only after the last poll that saw no job
    [ "$(grep -n '^scontrol delete' "$CALLS" | cut -d: -f1)" -gt "$(grep -n '^squeue' "$CALLS" | tail -1 | cut -d: -f1)" ]
}

@test "drain: a static node (no SLURMD_DYNAMIC_CONF) is never removed" {
    unset SLURMD_DYNAMIC_CONF
    run sh "$files/node-lifecycle" drain 60
    assert_success
    run grep -c '^scontrol delete' "$CALLS"
    assert_output 0
}

@test "drain: jobs past the grace period: the node is set down, and removed once they are gone" {
    export SLURMD_DYNAMIC_CONF="Features=nodeset-gpu" NODE_LIFECYCLE_DOWN_WAIT=5
    # the job outlives the 1 s grace period (about 10 polls), then ends
    JOBS_FOR=12 run sh "$files/node-lifecycle" drain 1
    assert_success
    assert_output --partial "jobs still running after 1s, stopping anyway: 4242"
    run cat "$CALLS"
    assert_line "scontrol update nodename=t-slurm-cluster-gpu-1 state=down reason=slurm-jail-chart: pod terminating, jobs did not end in 1s"
    assert_line "scontrol delete nodename=t-slurm-cluster-gpu-1"
}

@test "drain: jobs that outlive setting the node down keep the record" {
    export SLURMD_DYNAMIC_CONF="Features=nodeset-gpu"
    JOBS_FOR=100000 run sh "$files/node-lifecycle" drain 0
    assert_success
    assert_output --partial "keeping the node record"
    run grep -c '^scontrol delete' "$CALLS"
    assert_output 0
}

@test "drain: a node an admin (or a health check) drained keeps its reason and its record" {
    export SLURMD_DYNAMIC_CONF="Features=nodeset-gpu" SINFO_OUT="drained|NHC: gpu-check: GPU 3 fell off the bus"
    JOBS_FOR=1 run sh "$files/node-lifecycle" drain 60
    assert_success
    assert_output --partial "drained by someone else (NHC: gpu-check: GPU 3 fell off the bus)"
    run cat "$CALLS"
    refute_line --partial "state=drain"
    refute_line --partial "delete"
    assert_line --partial "squeue -h -w t-slurm-cluster-gpu-1" # still waits for the jobs
}

@test "drain: a node we drained before (pod restarted meanwhile) is drained and removed as usual" {
    export SLURMD_DYNAMIC_CONF="Features=nodeset-gpu" SINFO_OUT="drained|slurm-jail-chart: pod terminating"
    run sh "$files/node-lifecycle" drain 60
    assert_success
    run cat "$CALLS"
    assert_line --partial "state=drain reason=slurm-jail-chart: pod terminating"
    assert_line "scontrol delete nodename=t-slurm-cluster-gpu-1"
}

@test "drain: slurmctld unreachable for a while (restarting): the drain is retried, then the jobs are waited for" {
    # scontrol fails its first two calls
    printf '#!/bin/sh\necho "scontrol $*" >>"$CALLS"\n[ "$(grep -c "^scontrol" "$CALLS")" -gt 2 ]\n' >"$bin/scontrol"
    chmod +x "$bin/scontrol"
    NODE_LIFECYCLE_CTLD_WAIT=30 JOBS_FOR=1 run sh "$files/node-lifecycle" drain 60
    assert_success
    assert_output --partial "drained, no jobs left"
    run grep -c '^scontrol update nodename=t-slurm-cluster-gpu-1 state=drain' "$CALLS"
    assert_output 3
    run grep -c '^squeue' "$CALLS"
    assert_output 2
}

@test "drain: a bad grace period is reported, not fatal" {
    run sh "$files/node-lifecycle" drain soon
    assert_success
    assert_output --partial "SECONDS must be a whole number, got 'soon'"
    run cat "$CALLS"
    assert_output ""
}

@test "resume: resumes a node that our drain drained" {
    fake sinfo 0 "slurm-jail-chart: pod terminating"
    run sh "$files/node-lifecycle" resume
    assert_success
    run cat "$CALLS"
    assert_line "sinfo -h -n t-slurm-cluster-gpu-1 -o %E"
    assert_line "scontrol update nodename=t-slurm-cluster-gpu-1 state=resume"
}

@test "drain reads the slurm.conf the pod started with, which resume kept, after an upgrade rewrote the ConfigMap" {
    run sh "$files/node-lifecycle" resume
    assert_success
    # The upgrade: a newer release's slurm.conf under the running pod.
    echo "NamespaceType=namespace/slurm_jail" >"$SLURM_CONF"
    # scontrol and squeue record the slurm.conf they were given.
    printf '#!/bin/sh\necho "$(basename "$0") $(cat "$SLURM_CONF")" >>"$CALLS"\n' >"$bin/scontrol"
    cp "$bin/scontrol" "$bin/squeue"
    chmod +x "$bin/scontrol" "$bin/squeue"
    run sh "$files/node-lifecycle" drain 60
    assert_success
    assert_output --partial "drained, no jobs left"
    run cat "$CALLS"
    assert_line "scontrol ClusterName=as-started"
    assert_line "squeue ClusterName=as-started"
    refute_output --partial NamespaceType
}

@test "drain of a pod that kept no copy (started by an older chart) reads the mounted slurm.conf" {
    printf '#!/bin/sh\necho "$(basename "$0") SLURM_CONF=$SLURM_CONF" >>"$CALLS"\n' >"$bin/scontrol"
    chmod +x "$bin/scontrol"
    run sh "$files/node-lifecycle" drain 60
    assert_success
    run cat "$CALLS"
    assert_line "scontrol SLURM_CONF=$SLURM_CONF"
    [ ! -e "$NODE_LIFECYCLE_START_CONF" ]
}

@test "resume: a copy it cannot keep is a note; the node is still resumed" {
    # Its directory cannot be made: a file is in the way.
    : >"$BATS_TEST_TMPDIR/run"
    fake sinfo 0 "slurm-jail-chart: pod terminating"
    run sh "$files/node-lifecycle" resume
    assert_success
    assert_output --partial "could not keep a copy of $SLURM_CONF at $NODE_LIFECYCLE_START_CONF; drain will read $SLURM_CONF"
    run cat "$CALLS"
    assert_line "scontrol update nodename=t-slurm-cluster-gpu-1 state=resume"
}

@test "resume: never resumes a node drained for another reason" {
    fake sinfo 0 "NHC: gpu-check: GPU 3 fell off the bus"
    run sh "$files/node-lifecycle" resume
    assert_success
    assert_output --partial "not ours; leaving the node as it is"
    run grep -c '^scontrol' "$CALLS"
    assert_output 0
}

@test "node-lifecycle: the node defaults to the hostname; usage error without a command" {
    unset SLURM_NODENAME
    fake sinfo 0 ""
    run sh "$files/node-lifecycle" resume
    assert_success
    assert_line --partial "$(hostname): resume: reason is ''"
    run sh "$files/node-lifecycle"
    assert_failure 2
    assert_output --partial "usage: node-lifecycle drain SECONDS | node-lifecycle resume"
}

@test "with-munge: usage error without a command" {
    run sh "$files/with-munge"
    assert_failure 2
    assert_output --partial "usage: with-munge CMD"
}

# A minimal jail: the host's /usr bound read-only in a private mount
# namespace, plus its own /etc/slurm-jail-release. helm-test then runs with a
# fake srun that executes the task either chrooted into it or on the host.
# LAYOUT generations: the jail volume holds it as its live generation, with
# the volume's /home bound in, as chroot.so does.
helm_test_in() { # MODE (jail|host) [LAYOUT (single|generations)]
    local j=$BATS_TEST_TMPDIR/jail r
    r=$j
    if [ "${2:-single}" = generations ]; then
        r=$j/.slurm-jail/generations/1
        mkdir -p "$r/home" "$j/home"
        printf 'generation=1\ndata=/home\n' >"$j/.slurm-jail/live"
    fi
    mkdir -p "$r/usr" "$r/etc" "$j/home"
    ln -s usr/bin "$r/bin"
    ln -s usr/lib "$r/lib"
    [ ! -d /usr/lib64 ] || ln -s usr/lib64 "$r/lib64"
    echo "slurm-jail 0.1.0 test" >"$r/etc/slurm-jail-release"
    if [ "$1" = jail ]; then
        printf '#!/bin/sh\necho "srun $*" >>"$CALLS"\nwhile [ "${1#-}" != "$1" ]; do shift; done\nexec chroot "$ROOT" "$@"\n' >"$bin/srun"
    else
        printf '#!/bin/sh\necho "srun $*" >>"$CALLS"\nwhile [ "${1#-}" != "$1" ]; do shift; done\nexec "$@"\n' >"$bin/srun"
    fi
    chmod +x "$bin/srun"
    ROOT=$r JAIL_PATH=$j unshare --mount --propagation private sh -c \
        'mount --bind -o ro /usr "$ROOT/usr" &&
         { [ "$ROOT" = "$JAIL_PATH" ] || mount --bind "$JAIL_PATH/home" "$ROOT/home"; } &&
         exec sh "$0"' "$files/helm-test"
}

@test "helm-test passes when the job ran inside the jail" {
    run helm_test_in jail
    assert_success
    assert_output --partial "OK: the job ran inside the jail (slurm-jail 0.1.0 test)"
    run grep -c '^srun --nodes=1 --time=5 --job-name=helm-test cat ' "$CALLS"
    assert_output 2
    # the token file is cleaned up
    run find "$BATS_TEST_TMPDIR/jail/home" -type f
    assert_output ""
}

@test "helm-test passes on a volume with generations: the live one is the jail" {
    run helm_test_in jail generations
    assert_success
    assert_output --partial "OK: the job ran inside the jail (slurm-jail 0.1.0 test)"
    run find "$BATS_TEST_TMPDIR/jail/home" -type f
    assert_output ""
}

@test "helm-test fails when the job ran on the host instead" {
    run helm_test_in host
    assert_failure
    assert_output --partial "did not run in the jail"
}
