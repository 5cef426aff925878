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

# wait_for_file PATH WHAT HOW: waits up to $wait_timeout s for PATH (Secrets
# and volumes can appear after the container starts), then fails naming HOW
# to provide it.
wait_for_file() {
    local path=$1 what=$2 how=$3 waited=0
    while [ ! -s "$path" ]; do
        [ "$waited" -lt "$wait_timeout" ] ||
            die "no $what at $path after ${wait_timeout} s; $how"
        [ $((waited % 30)) -ne 0 ] || log "waiting for $what at $path"
        sleep 1
        waited=$((waited + 1))
    done
}

wait_for_inputs() {
    wait_for_file "$munge_secret" "munge key" \
        "mount the munge key Secret at $(dirname "$munge_secret") (key 'munge.key')"
    wait_for_file "$slurm_conf" "Slurm config" \
        "mount the Slurm config (slurm.conf, plugstack.conf) at $(dirname "$slurm_conf")"
}

wait_for_jail() {
    wait_for_file "$jail/.slurm-jail/populated" "populated jail" \
        "mount the jail volume at $jail and run populate-jail on it"
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
