#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# SSH sessions on a compute node (node1, where slurmd runs) that no
# pam_slurm_adopt adopted into a job: they never share the node's PID
# namespace. By default they are refused; with no_job=private they get a
# PID namespace and /proc of their own, which go with the session. And the
# path that asks slurmctld about a job (SLURM_JOB_ID in the PAM
# environment) never takes sshd down, whatever libslurm does.

setup_file() {
    # shellcheck source=tests/e2e/helpers.bash
    . "$BATS_TEST_DIRNAME/helpers.bash"
    use_cluster
    # shellcheck source=tests/e2e/sshd.bash
    . "$BATS_TEST_DIRNAME/sshd.bash"
    NJDIR=$STATE/e2e-ssh-nojob
    sshd_keys "$NJDIR" "$TEST_USER"
    echo "$PLUGSTACK_LINE" >"$NJDIR/plugstack.conf"
    chmod 0644 "$NJDIR/plugstack.conf"
    write_nojob_sshd_config >"$NJDIR/sshd_config"
    use_stack refuse
    # In node1's slurmd namespaces (where the jobs' namespaces are kept), as
    # 09-ssh's sshd; the stack is the bound file's content, read per login.
    start_sshd node1 "$NJDIR" pam-stack sshd
    wait_until 20 nojob_port_open
}

teardown_file() {
    # shellcheck source=tests/e2e/helpers.bash
    . "$BATS_TEST_DIRNAME/helpers.bash"
    # shellcheck source=tests/e2e/sshd.bash
    . "$BATS_TEST_DIRNAME/sshd.bash"
    stop_sshds "$NJDIR"
    ush "scancel -u $TEST_USER; rm -f .pam_environment e2e-nojob-go" || true
    ush_other "scancel -u $OTHER_USER" || true
    rm -rf "$NJDIR"
}

setup() {
    load helpers
    load_assertions
}

teardown() {
    ush 'rm -f .pam_environment e2e-nojob-go' || true
    use_stack refuse
    cancel_both_users_jobs
}

NJDIR=${SLURM_JAIL_LOCAL_DIR:-/var/lib/slurm-jail-local}/e2e-ssh-nojob
SECRET=e2e-nojob-secret

# use_stack refuse|private|session-only: node1's PAM stack, without
# pam_slurm_adopt (what pam_slurm_jail does alone): default, with
# no_job=private, or with the module in the session phase only (where
# pam_env has put the user's SLURM_JOB_ID before it). pam_env reads the
# user's ~/.pam_environment (Debian's sshd stack has it). Written in place:
# the bound file keeps its inode.
use_stack() {
    local args="plugstack=$NJDIR/plugstack.conf" account
    [ "$1" = private ] && args="$args no_job=private"
    account="account required $PAM_MODULE $args"
    [ "$1" = session-only ] && account="account required pam_permit.so"
    printf '%s\n' "$account" \
        "session required pam_env.so user_readenv=1 envfile=/dev/null" \
        "session required $PAM_MODULE $args" >"$NJDIR/pam-stack"
}

write_nojob_sshd_config() {
    cat <<EOF
Port 2231
HostKey $NJDIR/host_key
PidFile none
UsePAM yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AuthorizedKeysFile $NJDIR/keys/%u
PermitRootLogin no
LogLevel VERBOSE
EOF
    sshd_config_for_refusal_tests
}

nojob_port_open() { nsenter --net="$STATE/netns/node1" bash -c 'exec 3<>/dev/tcp/127.0.0.1/2231' 2>/dev/null; }

# sshnode1 CMD...: ssh to node1's sshd from the login host, as the test user.
sshnode1() {
    nsenter --net="$STATE/netns/login" -- ssh -p 2231 -i "$NJDIR/user_key" \
        -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o LogLevel=INFO -o ConnectTimeout=20 \
        "$TEST_USER@$(awk '$2 == "node1" { print $1 }' "$STATE/hosts")" "$@"
}

# What a session sees once another user's job started on node1 after it:
# the session waits for ~/e2e-nojob-go, then lists every process it can see
# and every command line it can read, leaves a process behind, and logs out.
# The pattern is written so that it does not match its own command line.
SESSION_SCRIPT='echo SESSION-STARTED; echo pid1=$(cat /proc/1/comm)
while [ ! -e e2e-nojob-go ]; do sleep 0.2; done
echo ps-sees=$(ps -e -o args= | grep -c "e2e-nojob-secre[t]")
echo proc-sees=$(grep -l "e2e-nojob-secre[t]" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)
echo own=$(ps -e -o args= | grep -c "^ps -e -o args=")
setsid sleep 4242 </dev/null >/dev/null 2>&1 &
echo SESSION-DONE'

# watch_other_job: sets $output (the session's) and $OTHER_JOB.
watch_other_job() {
    rm -f "$HOST_HOME/e2e-nojob-go"
    sshnode1 "$SESSION_SCRIPT" >"$BATS_TEST_TMPDIR/session" 2>&1 &
    local client=$!
    # The session is in (or refused) before the job starts.
    wait_until 20 session_settled "$client"
    OTHER_JOB=$(ush_other "sbatch -w node1 -o /dev/null --wrap \"bash -c 'sleep 300; : $SECRET'\" | awk '{print \$4}'")
    wait_until 30 other_job_running "$OTHER_JOB"
    wait_until 20 pgrep -f -- "$SECRET"
    touch "$HOST_HOME/e2e-nojob-go"
    wait "$client" || true
    run cat "$BATS_TEST_TMPDIR/session"
}
session_settled() { grep -q SESSION-STARTED "$BATS_TEST_TMPDIR/session" || ! kill -0 "$1" 2>/dev/null; }
other_job_running() { ush_other "squeue -h -j $1 -o %T" | grep -qx RUNNING; }
no_leftover() { ! pgrep -f 'sleep 4242' >/dev/null && ! pgrep -x sjail-ssh-init >/dev/null; }

@test "node1 without pam_slurm_adopt: a session with no job never sees a job that starts after it" {
    use_stack refuse
    watch_other_job
    refute_line --regexp '^(ps|proc)-sees=[1-9]'
    # By default such a session is refused.
    refute_output --partial SESSION-STARTED
    assert_output --partial "but the session was not adopted into one of the user's jobs"
}

@test "node1, no_job=private: the session has a PID namespace of its own and it ends with the session" {
    use_stack private
    watch_other_job
    assert_line SESSION-STARTED
    assert_line pid1=sjail-ssh-init
    assert_line SESSION-DONE
    assert_line ps-sees=0
    assert_line proc-sees=0
    # The session did see its own processes (the check is not vacuous).
    assert_line own=1
    # Nothing of the session is left: not its process, not its init.
    wait_until 15 no_leftover
    run pgrep -f 'sleep 4242'
    assert_failure
}

@test "node1, no_job=private: the session's /tmp (also its /var/tmp), /dev/shm and System V IPC are its own and go with it" {
    use_stack private
    # shellcheck disable=SC2016 # the session's shell expands it
    run sshnode1 'head -c 1048576 /dev/zero >/tmp/e2e-nojob-tmp &&
        head -c 1048576 /dev/zero >/dev/shm/e2e-nojob-shm && ipcmk -M 1048576 >/dev/null &&
        echo var-tmp=$(ls /var/tmp) &&
        echo fs=$(stat -f -c %T /tmp),$(stat -f -c %T /dev/shm) &&
        echo ipc=$(ipcs -m | grep -c "^0x"); echo SESSION-DONE'
    assert_success
    assert_line SESSION-DONE
    assert_line fs=tmpfs,tmpfs
    assert_line var-tmp=e2e-nojob-tmp
    assert_line ipc=1
    [ ! -e "$JAIL/var/tmp/e2e-nojob-tmp" ]
    # Nothing of it is on the node: not in its tmp= directory, not in the
    # node's /dev/shm (this machine's), not in slurmd's IPC namespace.
    [ ! -e "$STATE/nodes/node1/tmp/e2e-nojob-tmp" ]
    [ ! -e /dev/shm/e2e-nojob-shm ]
    run nsenter --target "$(slurmd_pid node1)" --ipc sh -c 'ipcs -m | grep -c "^0x" || true'
    assert_output 0
    # A later session starts with none of it.
    run sshnode1 'ls -A /tmp /dev/shm; echo ipc=$(ipcs -m | grep -c "^0x")'
    assert_success
    refute_output --partial e2e-nojob
    assert_line ipc=0
}

@test "node1, no_job=private: another session of the user does not see the first" {
    use_stack private
    sshnode1 'exec -a e2e-nojob-first sleep 6' </dev/null >/dev/null 2>&1 3>&- &
    local first=$!
    wait_until 20 pgrep -f e2e-nojob-first
    run sshnode1 'echo SESSION-STARTED; echo first=$(ps -e -o args= | grep -c "e2e-nojob-firs[t]")'
    kill "$first" 2>/dev/null || true
    assert_success
    assert_line SESSION-STARTED
    assert_line first=0
    wait_until 20 no_first
}
no_first() { ! pgrep -f e2e-nojob-first >/dev/null; }

@test "SLURM_JOB_ID of the user's own job in the PAM environment: sshd survives asking slurmctld, and the session joins the job" {
    run ush "sbatch -w node1 -o /dev/null --wrap 'exec sleep 300' | awk '{print \$4}'"
    assert_success
    local job=$output
    wait_until 30 job_running "$job"
    use_stack session-only
    ush "echo 'SLURM_JOB_ID DEFAULT=$job OVERRIDE=$job' >.pam_environment"
    run sshnode1 'echo SESSION-STARTED; echo job=$SLURM_JOB_ID; echo pid1=$(cat /proc/1/comm)'
    assert_success
    assert_line SESSION-STARTED
    assert_line pid1=sjail-job-init
    run cat "$NJDIR/sshd.stderr"
    refute_output --partial "symbol lookup error"
}

@test "SLURM_JOB_ID of another user's job in the PAM environment: refused by slurmctld's answer, sshd does not die" {
    run ush_other "sbatch -w node1 -o /dev/null --wrap 'exec sleep 300' | awk '{print \$4}'"
    assert_success
    local theirs=$output
    wait_until 30 other_job_running "$theirs"
    use_stack session-only
    ush "echo 'SLURM_JOB_ID DEFAULT=$theirs OVERRIDE=$theirs' >.pam_environment"
    : >"$NJDIR/sshd.log"
    run sshnode1 'echo SESSION-STARTED'
    assert_failure
    refute_output --partial SESSION-STARTED
    # sshd refused the session (its log says so); no process died on the
    # way (a crash exits 127 before sshd can log the refusal).
    run grep -F "pam_open_session()" "$NJDIR/sshd.log"
    assert_success
    run cat "$NJDIR/sshd.stderr"
    refute_output --partial "symbol lookup error"
}
