#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# SSH sessions through pam_slurm_jail.so: a real sshd with a real PAM stack
# on the login host (the node's jail namespace) and on node1 (the job's
# namespaces, after pam_slurm_adopt). The ssh client runs in the login
# host's network namespace; refusals are read as the client shows them.

setup_file() {
    # shellcheck source=tests/e2e/helpers.bash
    . "$BATS_TEST_DIRNAME/helpers.bash"
    use_cluster
    # shellcheck source=tests/e2e/sshd.bash
    . "$BATS_TEST_DIRNAME/sshd.bash"
    SSHDIR=$STATE/e2e-ssh
    # A user of the node who is not in the jail's /etc/passwd.
    getent passwd "$NOJAIL_USER" >/dev/null || useradd -u "$NOJAIL_UID" -M -d "/home/$NOJAIL_USER" -s /bin/bash "$NOJAIL_USER"
    sshd_keys "$SSHDIR" "$TEST_USER" "$NOJAIL_USER"
    write_sshd_config >"$SSHDIR/sshd_config"
    use_plugstack "$PLUGSTACK_LINE"
    # account and session: a refusal in the account phase reaches the client.
    printf '%s\n' "account required $PAM_MODULE plugstack=$SSHDIR/plugstack.conf" \
        "session required $PAM_MODULE plugstack=$SSHDIR/plugstack.conf" >"$SSHDIR/pam-login"
    printf '%s\n' \
        "account required $PAM_SLURM_ADOPT join_container=false" \
        "account required $PAM_MODULE plugstack=$SSHDIR/plugstack.conf" \
        "session required pam_env.so user_readenv=1 envfile=/dev/null" \
        "session required $PAM_MODULE plugstack=$SSHDIR/plugstack.conf" >"$SSHDIR/pam-node"
    # The login host: the documented node setup (ns-init worker), no slurmd;
    # node1: in slurmd's own namespaces, where the jobs' namespaces are kept.
    start_sshd login "$SSHDIR" pam-login sshd-login
    start_sshd node1 "$SSHDIR" pam-node sshd-node1
    wait_until 20 login_ssh_port_open
}

teardown_file() {
    # shellcheck source=tests/e2e/helpers.bash
    . "$BATS_TEST_DIRNAME/helpers.bash"
    # shellcheck source=tests/e2e/sshd.bash
    . "$BATS_TEST_DIRNAME/sshd.bash"
    stop_sshds "$SSHDIR"
    ush "scancel -u $TEST_USER" || true
    userdel "$NOJAIL_USER" 2>/dev/null || true
    rm -rf "$SSHDIR" "$STATE/nodes/login"
}

setup() {
    load helpers
    load_assertions
}

SSHDIR=${SLURM_JAIL_LOCAL_DIR:-/var/lib/slurm-jail-local}/e2e-ssh

write_sshd_config() {
    cat <<EOF
Port 2222
HostKey $SSHDIR/host_key
PidFile none
UsePAM yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AuthorizedKeysFile $SSHDIR/keys/%u
PermitRootLogin prohibit-password
AcceptEnv *
Subsystem sftp internal-sftp
AllowTcpForwarding yes
LogLevel VERBOSE
EOF
    sshd_config_for_refusal_tests
}

# use_plugstack LINE: the plugstack.conf the module reads (root-owned).
use_plugstack() {
    echo "$1" >"$SSHDIR/plugstack.conf.new"
    chmod 0644 "$SSHDIR/plugstack.conf.new"
    mv -f "$SSHDIR/plugstack.conf.new" "$SSHDIR/plugstack.conf"
}

login_ssh_port_open() {
    nsenter --net="$STATE/netns/login" bash -c 'exec 3<>/dev/tcp/127.0.0.1/2222' 2>/dev/null &&
        nsenter --net="$STATE/netns/node1" bash -c 'exec 3<>/dev/tcp/127.0.0.1/2222' 2>/dev/null
}

# sshto USER HOST CMD...: ssh from the login host's network, as USER.
sshto() {
    local user=$1 host=$2
    shift 2
    nsenter --net="$STATE/netns/login" -- ssh -p 2222 -i "$SSHDIR/user_key" \
        -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o LogLevel=INFO -o ConnectTimeout=20 \
        "$user@$host" "$@"
}

node1_addr() { getent_hosts node1; }
getent_hosts() { awk -v n="$1" '$2 == n { print $1 }' "$STATE/hosts"; }

@test "a login lands in the jail, in the user's home, without a chroot" {
    run sshto "$TEST_USER" 127.0.0.1 "test -f $MARKER && echo marker; pwd; id -un; test -e $HOST_ONLY || echo no-host; hostname"
    assert_success
    assert_line marker
    assert_line "$HOME_IN_JAIL"
    assert_line "$TEST_USER"
    assert_line no-host
    assert_line login
}

@test "user namespaces work in a login session" {
    run sshto "$TEST_USER" 127.0.0.1 'unshare --user --map-root-user id -u && echo userns-ok'
    assert_success
    assert_line 0
    assert_line userns-ok
}

@test "sbatch --wait from a login session runs in the jail and its output is read back" {
    run sshto "$TEST_USER" 127.0.0.1 "rm -f e2e-ssh.out; sbatch --wait -o e2e-ssh.out --wrap '$PROBE' && cat e2e-ssh.out"
    assert_success
    assert_output --partial "in-jail node"
    refute_output --partial NOT-IN-JAIL
    refute_output --partial HOST-VISIBLE
}

@test "sftp and scp work in the jail" {
    echo "from-the-client" >"$BATS_TEST_TMPDIR/up"
    run nsenter --net="$STATE/netns/login" -- scp -P 2222 -i "$SSHDIR/user_key" \
        -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o LogLevel=INFO \
        "$BATS_TEST_TMPDIR/up" "$TEST_USER@127.0.0.1:e2e-ssh-up"
    assert_success
    assert_equal "$(cat "$HOST_HOME/e2e-ssh-up")" from-the-client
    rm -f "$HOST_HOME/e2e-ssh-up"
}

@test "an interactive session gets a terminal in the jail" {
    run sshto "$TEST_USER" 127.0.0.1 -tt "tty; test -f $MARKER && echo marker; exit"
    assert_success
    assert_output --regexp '/dev/pts/[0-9]+'
    assert_output --partial marker
}

@test "port forwarding works from a session in the jail" {
    # -L through the session to the login host's own sshd: its banner comes back.
    nsenter --net="$STATE/netns/login" -- ssh -p 2222 -i "$SSHDIR/user_key" -o IdentitiesOnly=yes \
        -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -o ExitOnForwardFailure=yes -L 127.0.0.1:2299:127.0.0.1:2222 "$TEST_USER@127.0.0.1" 'sleep 20' \
        </dev/null >/dev/null 2>&1 3>&- &
    local client=$!
    wait_until 15 forwarded_port_open
    run nsenter --net="$STATE/netns/login" -- timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/2299; head -c 7 <&3'
    kill "$client" 2>/dev/null || true
    assert_output SSH-2.0
}

forwarded_port_open() { nsenter --net="$STATE/netns/login" bash -c 'exec 3<>/dev/tcp/127.0.0.1/2299' 2>/dev/null; }

@test "the client's environment does not steer the session (SLURM_JOB_ID, LD_PRELOAD)" {
    run nsenter --net="$STATE/netns/login" -- env SLURM_JOB_ID=1 LD_PRELOAD=/nonexistent.so \
        ssh -p 2222 -i "$SSHDIR/user_key" -o IdentitiesOnly=yes -o BatchMode=yes \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=INFO \
        -o SendEnv=SLURM_JOB_ID -o SendEnv=LD_PRELOAD "$TEST_USER@127.0.0.1" "test -f $MARKER && echo marker"
    assert_success
    assert_line marker
}

@test "a missing jail refuses the login, and the client reads why" {
    use_plugstack "required chroot.so jail=/mnt/no-such-jail"
    run sshto "$TEST_USER" 127.0.0.1 'echo SESSION-STARTED'
    use_plugstack "$PLUGSTACK_LINE"
    assert_failure
    refute_output --partial SESSION-STARTED
    assert_output --partial "pam_slurm_jail: no session for $TEST_USER, the jail cannot be entered"
    assert_output --partial "/mnt/no-such-jail"
}

@test "a jail the user owns refuses the login" {
    install -d -m 0755 -o "$TEST_UID" "$SSHDIR/userjail"
    use_plugstack "required chroot.so jail=$SSHDIR/userjail"
    run sshto "$TEST_USER" 127.0.0.1 'echo SESSION-STARTED'
    use_plugstack "$PLUGSTACK_LINE"
    assert_failure
    refute_output --partial SESSION-STARTED
    assert_output --partial "pam_slurm_jail: no session for $TEST_USER"
    assert_output --partial "root"
}

@test "a jail reached through a symlink the user planted refuses the login" {
    install -d -m 0755 -o "$TEST_UID" "$SSHDIR/userdir"
    ln -sfn /mnt/jail "$SSHDIR/userdir/jail"
    chown -h "$TEST_UID" "$SSHDIR/userdir/jail"
    use_plugstack "required chroot.so jail=$SSHDIR/userdir/jail"
    run sshto "$TEST_USER" 127.0.0.1 'echo SESSION-STARTED'
    use_plugstack "$PLUGSTACK_LINE"
    assert_failure
    refute_output --partial SESSION-STARTED
    assert_output --partial "pam_slurm_jail: no session for $TEST_USER"
}

@test "a state directory the user owns refuses the login (nothing planted there is used)" {
    install -d -m 0700 -o "$TEST_UID" "$SSHDIR/userstate"
    : >"$SSHDIR/userstate/ns"
    chown "$TEST_UID" "$SSHDIR/userstate/ns"
    use_plugstack "required chroot.so jail=/mnt/jail state=$SSHDIR/userstate"
    run sshto "$TEST_USER" 127.0.0.1 'echo SESSION-STARTED'
    use_plugstack "$PLUGSTACK_LINE"
    assert_failure
    refute_output --partial SESSION-STARTED
    assert_output --partial "pam_slurm_jail: no session for $TEST_USER"
    assert_output --partial "$SSHDIR/userstate"
}

@test "a plugstack.conf the user can write refuses the login" {
    chown "$TEST_UID" "$SSHDIR/plugstack.conf"
    run sshto "$TEST_USER" 127.0.0.1 'echo SESSION-STARTED'
    chown root "$SSHDIR/plugstack.conf"
    assert_failure
    refute_output --partial SESSION-STARTED
    assert_output --partial "must be owned by root"
}

# use_plugstack_d: plugstack.conf includes plugstack.conf.d/* (relative to
# its own directory, the layout pyxis documents); chroot.so's line is there.
use_plugstack_d() {
    install -d -m 0755 "$SSHDIR/plugstack.conf.d"
    echo 'optional other.so' >"$SSHDIR/plugstack.conf.d/10-other.conf"
    echo "$PLUGSTACK_LINE" >"$SSHDIR/plugstack.conf.d/50-chroot.conf"
    chmod 0644 "$SSHDIR"/plugstack.conf.d/*
    use_plugstack "include plugstack.conf.d/*"
}

@test "the chroot.so line in an included plugstack.conf.d/ file lets the login in" {
    use_plugstack_d
    run sshto "$TEST_USER" 127.0.0.1 "test -f $MARKER && echo marker; test -e $HOST_ONLY || echo no-host"
    use_plugstack "$PLUGSTACK_LINE"
    rm -rf "$SSHDIR/plugstack.conf.d"
    assert_success
    assert_line marker
    assert_line no-host
}

@test "an included plugstack.conf.d/ file the user can write refuses the login" {
    use_plugstack_d
    chown "$TEST_UID" "$SSHDIR/plugstack.conf.d/10-other.conf"
    run sshto "$TEST_USER" 127.0.0.1 'echo SESSION-STARTED'
    use_plugstack "$PLUGSTACK_LINE"
    rm -rf "$SSHDIR/plugstack.conf.d"
    assert_failure
    refute_output --partial SESSION-STARTED
    assert_output --partial "10-other.conf (included by $SSHDIR/plugstack.conf:1) is owned by uid $TEST_UID"
}

@test "a user missing from the jail's /etc/passwd is refused" {
    run sshto "$NOJAIL_USER" 127.0.0.1 'echo SESSION-STARTED'
    assert_failure
    refute_output --partial SESSION-STARTED
    assert_output --partial "user $NOJAIL_USER is not in the jail's /etc/passwd"
}

@test "node1 with no job of the user: pam_slurm_adopt refuses the login" {
    run sshto "$TEST_USER" "$(node1_addr)" 'echo SESSION-STARTED'
    assert_failure
    refute_output --partial SESSION-STARTED
}

@test "node1 with a running job: the login joins that job's jail, its processes, its /tmp and its IPC namespace" {
    run ush "sbatch -w node1 -o /dev/null --wrap 'ipcmk -Q >/dev/null; echo job-tmp >/tmp/e2e-ssh-tmp; exec sleep 300' | awk '{print \$4}'"
    assert_success
    local job=$output
    wait_until 30 job_running "$job"
    wait_until 10 job_tmp_written "$job"
    run sshto "$TEST_USER" "$(node1_addr)" "test -f $MARKER && echo marker; cat /tmp/e2e-ssh-tmp; echo queues=\$(ipcs -q | grep -c ^0x); echo job=\$SLURM_JOB_ID; ps -e -o comm= | sort | tr '\n' ' '; echo; pgrep -x slurmd || echo no-slurmd"
    ush "scancel $job"
    assert_success
    assert_line marker
    assert_line job-tmp
    assert_line queues=1
    assert_line "job=$job"
    assert_output --partial sleep
    assert_line no-slurmd
}

@test "sessions have their node's own /run: the login host's, and on node1 the one its job sees" {
    run ush "sbatch -w node1 -o /dev/null --wrap 'echo job-run >/run/lock/e2e-ssh-run; exec sleep 300' | awk '{print \$4}'"
    assert_success
    local job=$output
    wait_until 30 job_running "$job"
    wait_until 10 job_run_written "$job"
    run sshto "$TEST_USER" "$(node1_addr)" 'stat -f -c %T /run; cat /run/lock/e2e-ssh-run; rm /run/lock/e2e-ssh-run'
    ush "scancel $job"
    assert_success
    assert_line tmpfs
    assert_line job-run
    run sshto "$TEST_USER" 127.0.0.1 'stat -f -c %T /run; test -S /run/munge/munge.socket.2 && echo munge-ok; test -e /run/lock/e2e-ssh-run || echo not-on-login'
    assert_success
    assert_line tmpfs
    assert_line munge-ok
    assert_line not-on-login
}

@test "node1: a SLURM_JOB_ID the user puts in the PAM environment cannot lead into another user's job" {
    # pam_env with user_readenv (Debian's sshd stack has it) reads
    # ~/.pam_environment, which the user writes, after pam_slurm_adopt.
    run ush "sbatch -w node1 -o /dev/null --wrap 'exec sleep 300' | awk '{print \$4}'"
    local mine=$output
    run nsenter -t "$(slurmd_pid node2)" -m -u -n -- \
        sbatch -w node1 -o /dev/null --wrap 'exec sleep 300'
    assert_success
    local roots=${output##* }
    wait_until 30 job_running "$mine"
    wait_until 30 job_running "$roots"
    ush "echo 'SLURM_JOB_ID DEFAULT=$roots OVERRIDE=$roots' >.pam_environment"
    run sshto "$TEST_USER" "$(node1_addr)" 'echo SESSION-STARTED; ps -e -o comm='
    ush "rm -f .pam_environment; scancel $mine"
    ctl_scancel "$roots"
    assert_failure
    refute_output --partial SESSION-STARTED
    # The session phase refused (the account phase, before pam_env, passed):
    # sshd closes the connection; the reason goes to syslog.
    run grep -F "pam_open_session()" "$SSHDIR/sshd-node1.log"
    assert_success
}

ctl_scancel() { nsenter -t "$(slurmd_pid node2)" -m -u -n -- scancel "$1"; }

job_running() { [ "$(ush "squeue -h -j $1 -o %T")" = RUNNING ]; }
job_run_written() {
    local init
    init=$(awk '{print $1}' "$STATE/nodes/node1/run/jobs/$1/init" 2>/dev/null) || return 1
    [ -n "$init" ] && [ -f "/proc/$init/root/run/lock/e2e-ssh-run" ]
}
job_tmp_written() {
    local init
    init=$(awk '{print $1}' "$STATE/nodes/node1/run/jobs/$1/init" 2>/dev/null) || return 1
    [ -n "$init" ] && [ -f "/proc/$init/root/tmp/e2e-ssh-tmp" ]
}
