# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Functions shared by the worker and login entrypoints (installed in the
# images as /usr/local/lib/slurm-jail/entrypoint-lib.sh).

munge_secret=${MUNGE_KEY_FILE:-/etc/munge-secret/munge.key}
slurm_conf=${SLURM_CONF:-/etc/slurm/slurm.conf}
jail=${SLURM_JAIL_PATH:-/mnt/jail}
wait_timeout=${SLURM_JAIL_WAIT_TIMEOUT:-600}

log() { echo "${prog:-entrypoint}: $*" >&2; }

die() {
    echo "${prog:-entrypoint}: error: $*" >&2
    exit 1
}

# wait_for_any WHAT HOW PATH...: waits up to $wait_timeout s for one of the
# PATHs to be a non-empty file (Secrets and volumes can appear after the
# container starts), then fails naming HOW to provide it.
wait_for_any() {
    local what=$1 how=$2 waited=0 path where
    shift 2
    where=$(printf '%s or ' "$@")
    where=${where% or }
    while true; do
        for path in "$@"; do
            [ ! -s "$path" ] || return 0
        done
        [ "$waited" -lt "$wait_timeout" ] ||
            die "no $what at $where after ${wait_timeout} s; $how"
        [ $((waited % 30)) -ne 0 ] || log "waiting for $what at $where"
        sleep 1
        waited=$((waited + 1))
    done
}

# wait_for_file PATH WHAT HOW: wait_for_any for one path.
wait_for_file() { wait_for_any "$2" "$3" "$1"; }

wait_for_inputs() {
    wait_for_file "$munge_secret" "munge key" \
        "mount the munge key Secret at $(dirname "$munge_secret") (key 'munge.key')"
    wait_for_file "$slurm_conf" "Slurm config" \
        "mount the Slurm config (slurm.conf, plugstack.conf) at $(dirname "$slurm_conf")"
}

# A populated jail: a single-directory jail's marker, or the live file of a
# volume with generations (docs/jail-generations.md).
wait_for_jail() {
    wait_for_any "populated jail" "mount the jail volume at $jail and run populate-jail on it" \
        "$jail/.slurm-jail/populated" "$jail/.slurm-jail/live"
}

start_munged() {
    install -d -o munge -g munge -m 0700 /etc/munge
    install -o munge -g munge -m 0400 "$munge_secret" /etc/munge/munge.key
    install -d -o munge -g munge -m 0755 /run/munge
    install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
    runuser -u munge -- /usr/sbin/munged ||
        die "munged did not start; see /var/log/munge/munged.log"
    log "munged started"
}

stop_munged() {
    local pid
    pid=$(cat /run/munge/munged.pid 2>/dev/null) || return 0
    kill -TERM "$pid" 2>/dev/null || true
}
