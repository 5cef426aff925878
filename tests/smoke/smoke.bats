#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Smoke test of chroot.so under a real slurmctld/slurmd from Debian: one node,
# the README's plugstack line, a jail made with mmdebstrap.

bats_require_minimum_version 1.5.0

setup_file() {
    load node
    node_up
}

teardown_file() {
    load node
    node_down
}

setup() {
    load node
    load /usr/lib/bats/bats-support/load.bash
    load /usr/lib/bats/bats-assert/load.bash
}

# Puts a plugstack.conf line in place for one test; the next test restores it.
use_plugstack() {
    echo "$1" >"$SMOKE/etc/plugstack.conf"
}

teardown() {
    echo "$PLUGSTACK_LINE" >"$SMOKE/etc/plugstack.conf"
}

@test "srun runs the task inside the jail" {
    run as_user srun cat /etc/os-release /etc/slurm-jail-release
    assert_success
    # The jail's Debian: its own suite's os-release, as the node's jail has it.
    local codename
    codename=$(in_node sed -n 's/^VERSION_CODENAME=//p' /mnt/jail/etc/os-release)
    [ -n "$codename" ]
    assert_line "VERSION_CODENAME=$codename"
    assert_output --partial 'SLURM_JAIL_VERSION='
    # A file only the node's own root has is absent in the task's view.
    in_node test -r "$HOST_ONLY_FILE"
    run as_user srun test -e "$HOST_ONLY_FILE"
    assert_failure
}

@test "the task runs as the user, with its groups, in its cwd and environment" {
    run as_user env SMOKE_MARK=kept srun sh -c 'echo "$(id -u) $(id -G) $(pwd) $SMOKE_MARK $(whoami)"'
    assert_success
    assert_output "$SMOKE_UID $SMOKE_UID $SMOKE_GID2 /home/$SMOKE_USER kept $SMOKE_USER"
}

@test "exit codes pass through" {
    run as_user srun sh -c 'exit 3'
    assert_equal "$status" 3
}

@test "/proc is fresh and mounted nosuid,nodev,noexec" {
    run as_user srun awk '$5 == "/proc" { print $6 }' /proc/self/mountinfo
    assert_success
    assert_output --regexp 'nosuid,nodev,noexec'
}

@test "sbatch runs the script in the jail, srun inside it works, output lands in the jail" {
    local out=/opt/results/batch.out
    run as_user sbatch --wait -o "$out" --wrap 'cat /etc/slurm-jail-release; srun hostname; echo done'
    assert_success
    # /opt/results exists only inside the jail: slurmstepd opened the file there.
    run cat "/proc/$(cat "$SMOKE/holder.pid")/root/mnt/jail$out"
    assert_success
    assert_output --partial 'SLURM_JAIL_VERSION='
    assert_output --partial "$(hostname)"
    assert_output --partial 'done'
}

# As without a jail: Slurm goes to /tmp (here the job's own, in the jail)
# and says so; nothing lands on the node.
@test "a working directory missing in the jail: Slurm's fallback to /tmp in the jail, named" {
    run as_user srun --chdir=/no/such/dir sh -c 'pwd; cat /etc/slurm-jail-release; touch chdir-marker'
    assert_success
    assert_output --partial "couldn't chdir to \`/no/such/dir': No such file or directory: going to /tmp instead"
    assert_line /tmp
    assert_output --partial 'SLURM_JAIL_VERSION='
    run in_node test -e /var/lib/slurm-jail/tmp/chdir-marker
    assert_failure
    run in_node test -e /tmp/chdir-marker
    assert_failure
}

@test "a missing jail fails the task, which never runs on the host" {
    use_plugstack 'required chroot.so jail=/mnt/no-jail'
    run as_user srun touch /tmp/missing-jail-marker
    assert_failure
    assert_output --partial 'chroot: StepId='
    assert_output --partial 'task not started, jail entry failed: jail /mnt/no-jail'
    assert_output --partial 'No such file or directory'
    run in_node sh -c 'ls /tmp/missing-jail-marker /var/lib/slurm-jail/tmp/missing-jail-marker /mnt/jail/tmp/missing-jail-marker 2>/dev/null'
    assert_output ''
}

@test "a missing jail fails a batch job and the error lands in its output file" {
    use_plugstack 'required chroot.so jail=/mnt/no-jail'
    run as_user sbatch --wait -o "/home/$SMOKE_USER/failed.out" --wrap 'touch /tmp/batch-marker'
    assert_failure
    run in_node cat "/home/$SMOKE_USER/failed.out"
    assert_output --partial 'chroot: StepId='
    assert_output --partial 'jail /mnt/no-jail'
    run in_node sh -c 'ls /tmp/batch-marker /var/lib/slurm-jail/tmp/batch-marker 2>/dev/null'
    assert_output ''
}

@test "an unknown plugstack setting is refused by srun with a clear message" {
    use_plugstack 'required chroot.so jail=/mnt/jail jial=/x'
    run as_user srun true
    assert_failure
    assert_output --partial "chroot: plugstack.conf: unknown setting 'jial'"
}

@test "--no-jail is refused unless plugstack allows it" {
    run as_user srun --no-jail true
    assert_failure
    assert_output --partial '--no-jail is not allowed'
    use_plugstack "required chroot.so jail=/mnt/jail allow_opt_out=$SMOKE_USER"
    run as_user srun --no-jail test -e "$HOST_ONLY_FILE"
    assert_success
}

@test "the node keeps working after the failures" {
    run as_user srun cat /etc/slurm-jail-release
    assert_success
    # The node passes through "completing" while the job's epilog runs; it
    # must come back to idle, never drained.
    local state
    for _ in $(seq 1 50); do
        state=$(in_node sinfo -h -o '%T')
        [ "$state" = idle ] && break
        sleep 0.2
    done
    run in_node sinfo -h -o '%T'
    assert_output 'idle'
}
