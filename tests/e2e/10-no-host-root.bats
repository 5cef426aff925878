#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A step that may not, or cannot, enter the jail runs nothing of the user's on
# the node's own root: not the task, not a --task-epilog (a script, or
# /usr/bin/perl with code in PERL5OPT), not slurm.conf's TaskEpilog (which
# runs as the user, with the user's environment), and no -o file is created
# there, even when the plugin is marked optional. The user's code reports
# where it ran (user_code.bash); each test first shows that the same code,
# in a step that may run, runs in the jail and says so.

setup_file() {
    load helpers
    use_cluster
}

setup() {
    load helpers
    load user_code
    setup_user_code_test
    user_script epilog.sh epilog
    REFUSAL="--no-jail is not allowed for uid $TEST_UID \\(asked for by option or by _SLURM_SPANK_OPTION_chroot_no_jail in the environment\); an admin must list the user in allow_opt_out= in plugstack.conf"
    MISSING='jail /mnt/e2e-missing-jail: /mnt/e2e-missing-jail: No such file or directory'
}

teardown() {
    set_plugstack "$PLUGSTACK_LINE"
    if grep -q '^TaskEpilog=' "$STATE/etc/slurm.conf"; then
        sed -i '/^TaskEpilog=/d' "$STATE/etc/slurm.conf"
        ctld_exec scontrol reconfigure
        # The script stays until no slurmd runs it any more.
        wait_until 30 task_epilog_off_on_both
    fi
    rm -f "$STATE/etc/e2e-task-epilog" "$HOST_HOME/.bash_profile"
    remove_drops
}

# The user's own copy of slurm.conf without the plugin stack: srun then
# loads no plugin and cannot refuse anything itself.
write_user_conf() {
    ush "grep -v '^PlugStackConfig=' /etc/slurm/slurm.conf >$T/slurm.conf"
}

# assert_step_refused STEP CAUSE: the user sees the plugin's line for the step.
# slurmstepd's lines reach the user prefixed "slurmstepd-NODE:" up to Slurm
# 24.11, with their log timestamp "[2026-11-25T13:00:37.453]" from 26.05 on.
assert_step_refused() {
    assert_output --regexp "(slurmstepd-node[12]:|\[[0-9-]+T[0-9:.]+\]) error: chroot: StepId=[0-9]+\.$1: task not started, jail entry failed: $2"
}

@test "control: task, --task-epilog script and perl epilog run in the jail and say so" {
    run ush "PERL5OPT='$(perl5opt perl-epilog)' srun -N2 --task-epilog=/usr/bin/perl $T/task.sh &&
             srun -N2 --task-epilog=\$HOME/$T/epilog.sh true"
    assert_success
    assert_ran_in_jail task 2
    assert_ran_in_jail perl-epilog 2
    assert_ran_in_jail epilog 2
}

@test "_SLURM_SPANK_OPTION_chroot_no_jail in srun's or sbatch's environment: refused at once, no step starts" {
    run ush "_SLURM_SPANK_OPTION_chroot_no_jail= srun -N2 --task-epilog=\$HOME/$T/epilog.sh $T/task.sh"
    assert_failure
    assert_line --regexp "^srun: error: chroot: $REFUSAL$"
    refute_output --partial slurmstepd
    run ush "_SLURM_SPANK_OPTION_chroot_no_jail= sbatch --wrap $T/task.sh"
    assert_failure
    assert_line --regexp "^sbatch: error: chroot: $REFUSAL$"
    refute_output --partial 'Submitted batch job'
    assert_ran_nowhere
}

@test "_SLURM_SPANK_OPTION_chroot_no_jail past srun (own slurm.conf): refused on the node, the --task-epilog script runs nowhere" {
    write_user_conf
    run ush "SLURM_CONF=\$HOME/$T/slurm.conf _SLURM_SPANK_OPTION_chroot_no_jail= \
             srun -N2 --task-epilog=\$HOME/$T/epilog.sh $T/task.sh"
    assert_failure
    assert_step_refused 0 "$REFUSAL"
    assert_ran_nowhere
}

@test "_SLURM_SPANK_OPTION_chroot_no_jail past srun: /usr/bin/perl as --task-epilog with code in PERL5OPT runs nowhere" {
    write_user_conf
    run ush "SLURM_CONF=\$HOME/$T/slurm.conf _SLURM_SPANK_OPTION_chroot_no_jail= \
             PERL5OPT='$(perl5opt perl-epilog)' srun -N2 --task-epilog=/usr/bin/perl $T/task.sh"
    assert_failure
    assert_step_refused 0 "$REFUSAL"
    assert_ran_nowhere
}

@test "sbatch --export=ALL,_SLURM_SPANK_OPTION_chroot_no_jail=: the batch step is refused, the error lands in its output file" {
    printf '#!/bin/sh\n%s\nsrun --task-epilog=%s %s\n' "$HOME_IN_JAIL/$T/task.sh" \
        "$HOME_IN_JAIL/$T/epilog.sh" "$HOME_IN_JAIL/$T/task.sh" >"$HOST_HOME/$T/job.sh"
    run ush "sbatch --wait -o $T/job.out --export=ALL,_SLURM_SPANK_OPTION_chroot_no_jail= $T/job.sh"
    assert_failure
    local job
    job=$(submitted_job)
    run cat "$HOST_HOME/$T/job.out"
    assert_step_refused batch "$REFUSAL"
    assert_ran_nowhere
    wait_until 10 spool_has_no_job "$job"
}


# set_task_epilog: slurm.conf's TaskEpilog (the admin's bash script, run as
# the user with the user's environment) records where it ran.
set_task_epilog() {
    user_code task-epilog >"$STATE/etc/e2e-task-epilog"
    sed -i '1s|.*|#!/bin/bash|' "$STATE/etc/e2e-task-epilog"
    chmod 0755 "$STATE/etc/e2e-task-epilog"
    echo "TaskEpilog=/etc/slurm/e2e-task-epilog" >>"$STATE/etc/slurm.conf"
    ctld_exec scontrol reconfigure
}

# Both slurmds run the TaskEpilog, or neither does (reconfigure reaches
# them asynchronously).
task_epilog_runs_on_both() {
    rm -f "$JAIL$JAIL_DROP/ran"
    ush "srun -N2 true" >/dev/null 2>&1
    [ "$(grep -c '^task-epilog-saw-jail$' "$JAIL$JAIL_DROP/ran" 2>/dev/null)" = 2 ]
}
task_epilog_off_on_both() {
    rm -f "$JAIL$JAIL_DROP/ran"
    ush "srun -N2 true" >/dev/null 2>&1
    [ ! -e "$JAIL$JAIL_DROP/ran" ]
}

@test "slurm.conf TaskEpilog (and the user's BASH_ENV in it) never runs on the node's root for a failing step" {
    set_task_epilog
    wait_until 30 task_epilog_runs_on_both
    user_script bash-env.sh bash-env
    rm -f "$JAIL$JAIL_DROP/ran"
    run ush "BASH_ENV=\$HOME/$T/bash-env.sh srun -N2 true"
    assert_success
    assert_ran_in_jail task-epilog 2
    assert_ran_in_jail bash-env 2
    rm -f "$JAIL$JAIL_DROP/ran"
    set_plugstack "required chroot.so jail=/mnt/e2e-missing-jail"
    run ush "BASH_ENV=\$HOME/$T/bash-env.sh srun -N2 $T/task.sh"
    assert_failure
    assert_step_refused 0 "$MISSING"
    assert_ran_nowhere
    write_user_conf
    set_plugstack "$PLUGSTACK_LINE"
    run ush "SLURM_CONF=\$HOME/$T/slurm.conf _SLURM_SPANK_OPTION_chroot_no_jail= \
             BASH_ENV=\$HOME/$T/bash-env.sh srun -N2 $T/task.sh"
    assert_failure
    assert_step_refused 0 "$REFUSAL"
    assert_ran_nowhere
}

@test "-o to a path only the node's root has: nothing is created there when the step fails" {
    set_plugstack "required chroot.so jail=/mnt/e2e-missing-jail"
    # With %n slurmstepd opens the file on the node, from the dead end, where
    # the path does not exist. (srun exits 0 after such a launch failure:
    # Slurm's behaviour, the same for a path missing from the jail.)
    run ush "srun -N2 -o $HOST_DROP/out-%n.txt $T/task.sh"
    assert_line 'srun: error: task 0 launch failed: Slurmd could not connect IO'
    assert_line 'srun: error: task 1 launch failed: Slurmd could not connect IO'
    run ush "sbatch --wait -o $HOST_DROP/batch.out -e $HOST_DROP/batch.err --wrap $T/task.sh"
    assert_failure
    local job
    job=$(submitted_job)
    assert_ran_nowhere
    # The admin sees why in slurmd's log.
    run grep -h "chroot: StepId=$job\.batch: jail entry failed, no task will run: $MISSING" \
        "$STATE"/logs/slurmd-node*.log
    assert_success
    wait_until 10 spool_has_no_job "$job"
}

@test "optional chroot.so with a missing jail: no task and no --task-epilog runs anywhere" {
    set_plugstack "optional chroot.so jail=/mnt/e2e-missing-jail"
    run ush "srun -N2 --task-epilog=\$HOME/$T/epilog.sh $T/task.sh"
    assert_failure
    assert_step_refused 0 "$MISSING"
    assert_ran_nowhere
    run ush "PERL5OPT='$(perl5opt perl-epilog)' srun -N2 --task-epilog=/usr/bin/perl /usr/bin/perl -e 1"
    assert_failure
    assert_step_refused 0 "$MISSING"
    assert_ran_nowhere
    run ush "sbatch --wait -o $T/job.out --wrap $T/task.sh"
    assert_failure
    local job
    job=$(submitted_job)
    run cat "$HOST_HOME/$T/job.out"
    assert_step_refused batch "$MISSING"
    assert_ran_nowhere
    wait_until 10 spool_has_no_job "$job"
}

@test "missing jail: the --task-epilog script and perl's PERL5OPT code run nowhere" {
    set_plugstack "required chroot.so jail=/mnt/e2e-missing-jail"
    run ush "srun -N2 --task-epilog=\$HOME/$T/epilog.sh $T/task.sh"
    assert_failure
    assert_step_refused 0 "$MISSING"
    assert_ran_nowhere
    run ush "PERL5OPT='$(perl5opt perl-epilog)' srun -N2 --task-epilog=/usr/bin/perl $T/task.sh"
    assert_failure
    assert_step_refused 0 "$MISSING"
    assert_ran_nowhere
}

# slurmd reads a user's login environment by running "su - USER" on the
# node's own root, which runs the user's shell startup files; the nodes' su
# runs through the worker image's PAM stack (images/worker/pam.d/su), whose
# pam_slurm_jail.so moves it into the job's jail first.
@test "sbatch --get-user-env and --export=NONE: the user's ~/.bash_profile, run by slurmd's su, runs in the jail" {
    user_code profile >"$HOST_HOME/.bash_profile"
    chown "$TEST_UID:$TEST_UID" "$HOST_HOME/.bash_profile"
    run ush "cd $T && sbatch -w node1 --get-user-env --wait -o job.out --wrap true &&
             sbatch -w node2 --export=NONE --wait -o job2.out --wrap true"
    assert_success
    assert_ran_in_jail profile 2
}

# What the su's session leaves is its own and goes with it: its /tmp and
# /dev/shm are not the node's, nor its System V IPC. The profile reports
# what it saw, so the test knows it ran.
@test "sbatch --get-user-env: what the user's ~/.bash_profile writes to /tmp, /dev/shm and System V IPC is gone after the su" {
    cat >"$HOST_HOME/.bash_profile" <<PROFILE
head -c 1048576 /dev/zero >/tmp/e2e-su-tmp
head -c 1048576 /dev/zero >/dev/shm/e2e-su-shm
ipcmk -M 1048576 >/dev/null
echo "fs=\$(stat -f -c %T /tmp),\$(stat -f -c %T /dev/shm) ipc=\$(ipcs -m | grep -c '^0x')" >"\$HOME/$T/su-profile.out"
PROFILE
    chown "$TEST_UID:$TEST_UID" "$HOST_HOME/.bash_profile"
    run ush "cd $T && sbatch -w node1 --get-user-env --wait -o su.out --wrap 'ls -A /tmp /dev/shm'"
    assert_success
    run cat "$HOST_HOME/$T/su-profile.out"
    assert_output "fs=tmpfs,tmpfs ipc=1"
    run cat "$HOST_HOME/$T/su.out"
    refute_output --partial e2e-su
    [ ! -e "$STATE/nodes/node1/tmp/e2e-su-tmp" ]
    [ ! -e /dev/shm/e2e-su-shm ]
    run nsenter --target "$(slurmd_pid node1)" --ipc sh -c 'ipcs -m | grep -c "^0x" || true'
    assert_output 0
}
