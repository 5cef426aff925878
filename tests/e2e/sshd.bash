# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# A real sshd for the SSH tests (09-ssh, 26-ssh-no-job):
# its keys, and sshd started on the login host (the documented node setup,
# ns-init worker, no slurmd) or in node1's slurmd namespaces (where the
# jobs' namespaces are kept), with DIR/PAMFILE bound over /etc/pam.d/sshd.
# Needs helpers.bash (STATE, slurmd_pid).

# sshd_keys DIR USER...: DIR (made anew) with a host key, one user key that
# each USER may log in with (DIR/keys/USER), and sshd's privilege separation
# directory.
sshd_keys() {
    local dir=$1 u
    shift
    rm -rf "$dir"
    install -d -m 0755 "$dir" "$dir/keys"
    ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
    ssh-keygen -q -t ed25519 -N '' -f "$dir/user_key"
    for u in "$@"; do
        install -m 0644 "$dir/user_key.pub" "$dir/keys/$u"
    done
    install -d -m 0755 /run/sshd
}

# start_sshd WHERE DIR PAMFILE NAME: sshd -D with DIR/sshd_config on WHERE
# (login: the login host; node1: node1's slurmd namespaces), its PAM stack
# DIR/PAMFILE; its log DIR/NAME.log, its stderr DIR/NAME.stderr, its pid
# DIR/NAME.pid.
start_sshd() {
    local where=$1 dir=$2 pam=$3 name=$4
    local run="mount --bind $dir/$pam /etc/pam.d/sshd && exec /usr/sbin/sshd -D -f $dir/sshd_config -E $dir/$name.log"
    case $where in
        login)
            install -d -m 0755 "$STATE/nodes/login/spool" "$STATE/nodes/login/run" "$STATE/nodes/login/tmp"
            nsenter --net="$STATE/netns/login" -- unshare --mount --uts --propagation private -- \
                "$SLURM_JAIL_ROOT/hack/lib/local-cluster/ns-init" worker login -- bash -c "$run" \
                </dev/null >/dev/null 2>"$dir/$name.stderr" 3>&- 8>&- 9>&- &
            ;;
        node1)
            nsenter -t "$(slurmd_pid node1)" -m -u -n -- bash -c "$run" \
                </dev/null >/dev/null 2>"$dir/$name.stderr" 3>&- 8>&- 9>&- &
            ;;
        *) echo "start_sshd: WHERE is login or node1, not '$where'" >&2; return 2 ;;
    esac
    echo $! >"$dir/$name.pid"
}

# stop_sshds DIR: every sshd start_sshd started with DIR, node1's bound PAM
# stack undone.
stop_sshds() {
    local f pid
    for f in "$1"/*.pid; do
        pid=$(cat "$f" 2>/dev/null) && kill "$pid" 2>/dev/null
    done
    nsenter -t "$(slurmd_pid node1)" -m umount /etc/pam.d/sshd 2>/dev/null || true
}
