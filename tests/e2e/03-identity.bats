#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Tasks keep the user's identity, home, working directory and environment.

setup() {
    load helpers
    load_assertions
    make_test_dir
}

@test "uid, gid, supplementary groups and whoami match the user on both nodes" {
    run ush "srun -N2 sh -c 'echo \$(id -u) \$(id -g) \$(id -G) \$(whoami)'"
    assert_success
    assert_equal "$(grep -cx '5001 5001 5001 5002 sjuser' <<<"$output")" 2
}

@test "HOME and the submit directory carry into the task" {
    run ush "mkdir -p $T/sub && cd $T/sub && srun -N2 sh -c 'echo home=\$HOME; echo cwd=\$(pwd)'"
    assert_success
    assert_equal "$(grep -cx "home=$HOME_IN_JAIL" <<<"$output")" 2
    assert_equal "$(grep -cx "cwd=$HOME_IN_JAIL/$T/sub" <<<"$output")" 2
}

@test "the environment passes through srun and sbatch" {
    run ush "E2E_VAR='a b c' srun -N2 printenv E2E_VAR"
    assert_success
    assert_equal "$(grep -cx 'a b c' <<<"$output")" 2
    run ush "E2E_VAR=from-sbatch sbatch --wait -o $T/env.out --wrap 'printenv E2E_VAR'"
    assert_success
    assert_equal "$(cat "$HOST_HOME/$T/env.out")" from-sbatch
}

@test "--chdir to a directory missing in the jail fails and names it" {
    run ush "srun --chdir=/e2e-missing-dir sh -c 'echo RAN; pwd'"
    assert_failure
    assert_output --partial /e2e-missing-dir
    assert_output --partial chroot:
    refute_output --partial RAN
}

@test "--chdir to a directory that exists only on the host fails" {
    run ush "srun --chdir=$SLURM_JAIL_ROOT sh -c 'echo RAN; pwd'"
    assert_failure
    assert_output --partial "$SLURM_JAIL_ROOT"
    refute_output --partial RAN
}
