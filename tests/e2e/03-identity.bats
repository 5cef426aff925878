#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Tasks keep the user's identity, home, working directory and environment.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    setup_job_test
}

@test "uid, gid, supplementary groups and whoami match the user on both nodes" {
    run ush "srun -N2 sh -c 'echo \$(id -u) \$(id -g) \$(id -G) \$(whoami)'"
    assert_success
    assert_equal "$(grep -cx "$TEST_UID $TEST_UID $TEST_UID $EXTRA_GID $TEST_USER" <<<"$output")" 2
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

# The step's working directory resolves in the jail, whichever way it was
# given: srun's and sbatch's --chdir (absolute and relative), the directory
# srun or salloc runs in, a batch script's cd, the job's own /tmp.
@test "--chdir and the submit directory: the jail's, the job's /tmp, relative, sbatch, salloc" {
    run ush "mkdir -p $T/sub && cd $T &&
             srun --chdir=/tmp pwd && srun --chdir=sub pwd && (cd sub && srun --chdir=.. pwd) &&
             srun --chdir=$HOME_IN_JAIL/$T/sub pwd &&
             (cd /tmp && srun pwd) &&
             salloc -Q -N1 sh -c 'cd /tmp && srun pwd' &&
             sbatch --wait -Q -D /tmp -o $HOME_IN_JAIL/$T/batch-D.out --wrap pwd &&
             sbatch --wait -Q -o batch-cd.out --wrap 'cd /tmp && srun pwd' &&
             sbatch --wait -Q -o batch-tmp.out --wrap 'mkdir /tmp/e2e-only-in-job && srun --chdir=/tmp/e2e-only-in-job pwd'"
    assert_success
    assert_equal "$output" "/tmp
$HOME_IN_JAIL/$T/sub
$HOME_IN_JAIL/$T
$HOME_IN_JAIL/$T/sub
/tmp
/tmp"
    assert_equal "$(cat "$HOST_HOME/$T/batch-D.out")" /tmp
    assert_equal "$(cat "$HOST_HOME/$T/batch-cd.out")" /tmp
    assert_equal "$(cat "$HOST_HOME/$T/batch-tmp.out")" /tmp/e2e-only-in-job
}

# A directory the jail does not have (missing everywhere, or only on the
# node's own root): Slurm's own fallback to /tmp and its message naming the
# directory, as without a jail; nothing of the node's root is reached.
@test "--chdir to a directory missing in the jail or only on the node: Slurm's fallback to /tmp, named" {
    run ush "srun --chdir=/e2e-missing-dir sh -c 'echo RAN; pwd'"
    assert_success
    assert_output --partial "couldn't chdir to \`/e2e-missing-dir': No such file or directory: going to /tmp instead"
    assert_equal "$(grep -v chdir <<<"$output")" "RAN
/tmp"
    run ush "srun --chdir=$SLURM_JAIL_ROOT $PROBE"
    assert_success
    assert_output --partial "couldn't chdir to \`$SLURM_JAIL_ROOT'"
    assert_in_jail 1
    run ush "cd $T && sbatch --wait -Q -D /e2e-missing-dir -o $HOME_IN_JAIL/$T/missing.out --wrap pwd"
    assert_success
    assert_equal "$(grep -v chdir "$HOST_HOME/$T/missing.out")" /tmp
}
