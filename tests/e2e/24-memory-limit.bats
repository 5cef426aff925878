#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# --mem with task/cgroup: a jailed task over its memory limit is OOM-killed,
# one under it runs. The cluster is restarted with cgroups for this file and
# restored afterwards.

setup_file() {
    load helpers
    [ -d /sys/fs/cgroup/memory ] || return 0 # the tests skip, naming the controller
    use_cluster SLURM_JAIL_LOCAL_CGROUP=yes
}


setup() {
    load helpers
    load_assertions
    [ -d /sys/fs/cgroup/memory ] ||
        skip "no cgroup v1 memory controller at /sys/fs/cgroup/memory: task/cgroup cannot enforce --mem here"
}

@test "the cluster runs task/cgroup with ConstrainRAMSpace" {
    run ush "scontrol show config"
    assert_line --regexp '^TaskPlugin += task/cgroup$'
    assert_line --regexp '^ProctrackType += proctrack/cgroup$'
}

# Slurm sets the limit on the job and step cgroups; the task's own cgroup
# below them may show none, so the effective limit is the smallest on the path.
# /sys/fs/cgroup/memory is the hierarchy's root on a plain node, and the
# container's own cgroup in a container (mountinfo's root field says which):
# the task's path is taken relative to it.
@test "a jailed task's memory cgroup has the --mem limit" {
    local script=$HOST_HOME/e2e-mem-limit.sh
    cat >"$script" <<'SCRIPT'
#!/bin/sh
cat /etc/slurm-jail-release >/dev/null || exit 1
mnt=/sys/fs/cgroup/memory
top=$(awk -v m="$mnt" '$5 == m { print $4 }' /proc/self/mountinfo)
path=$(grep :memory: /proc/self/cgroup | cut -d: -f3)
d=$mnt${path#"${top%/}"}
while [ "$d" != "$mnt" ]; do cat "$d/memory.limit_in_bytes"; d=${d%/*}; done | sort -n | head -n1
SCRIPT
    chmod 0755 "$script"
    run ush "srun -w node1 --mem=64M $HOME_IN_JAIL/e2e-mem-limit.sh"
    assert_success
    assert_output 67108864
}

@test "a jailed task within --mem runs" {
    run ush "srun -w node1 --mem=256M sh -c 'cat $MARKER >/dev/null && head -c 32M /dev/zero | tail | wc -c'"
    assert_success
    assert_output 33554432
}

@test "a jailed task over --mem is OOM-killed" {
    run ush "srun -w node1 --mem=64M sh -c 'cat $MARKER >/dev/null && head -c 512M /dev/zero | tail | wc -c'"
    assert_failure
    refute_output 536870912
    assert_output --regexp 'oom-kill|OUT_OF_MEMORY|Out Of Memory'
}
