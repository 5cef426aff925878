#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A jailed task cannot see or reach the host's root.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    load_assertions
}

@test "/proc in a task is a fresh procfs, mounted nosuid,nodev,noexec" {
    run ush "srun sh -c 'stat -f -c %T /proc; grep \" /proc proc \" /proc/self/mounts'"
    assert_success
    assert_line proc
    assert_output --regexp '/proc proc [^ ]*nosuid,nodev,noexec'
}

@test "the task's mount table shows no host path" {
    run ush "srun cat /proc/self/mountinfo"
    assert_success
    # Field 5 is the mount point as the task sees it.
    run awk '$5 ~ "^(/mnt/jail|/var/lib/slurm-jail|/run/slurm-jail)" { print }' <<<"$output"
    assert_output ''
}

@test "/proc/self/root, /proc/1/root and the root of every visible process stay in the jail" {
    run ush "srun sh -c 'readlink /proc/self/root; for p in /proc/[0-9]*; do
        if test -e \$p/root$HOST_ONLY; then echo HOST-VIA-\$p; fi; done;
        if test -e /proc/1/root$HOST_ONLY; then echo HOST-VIA-PID1; fi; echo checked'"
    assert_success
    assert_line /
    assert_line checked
    refute_output --partial HOST-VIA
}

@test "'..' past the root stays at the jail's root" {
    run ush "srun sh -c 'cd / && cd ../../.. && pwd && cat ../../..$MARKER &&
        if test -e /../../..$HOST_ONLY; then echo HOST-VIA-DOTDOT; fi &&
        test \"\$(ls -a /../..)\" = \"\$(ls -a /)\" && echo same-root'"
    assert_success
    assert_line /
    assert_line --partial SLURM_JAIL_VERSION=
    assert_line same-root
    refute_output --partial HOST-VIA
}
