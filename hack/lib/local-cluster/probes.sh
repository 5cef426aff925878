# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Readiness probes: munge answers, slurmctld answers, every node is idle.

LC_READY_TIMEOUT=${SLURM_JAIL_LOCAL_TIMEOUT:-60}
# One probe attempt never hangs longer than this (a stopped daemon).
LC_PROBE_TIMEOUT=5

probe_munge() {
    timeout "$LC_PROBE_TIMEOUT" munge -n -S "$(munge_socket)" 2>/dev/null |
        timeout "$LC_PROBE_TIMEOUT" unmunge -S "$(munge_socket)" >/dev/null 2>&1
}

probe_ctld() {
    ctl_exec timeout "$LC_PROBE_TIMEOUT" scontrol ping 2>/dev/null | grep -q 'is UP'
}

# Every configured node reports idle.
probe_nodes() {
    local idle
    idle=$(ctl_exec timeout "$LC_PROBE_TIMEOUT" sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$' || true)
    [ "$idle" -eq "$(workers)" ]
}

probe_logs() {
    case $1 in
        munge) tail -n 20 "$(munged_log)" 2>/dev/null ;;
        ctld) tail -n 20 "$LC_STATE/logs/slurmctld.log" 2>/dev/null ;;
        nodes)
            ctl_exec timeout "$LC_PROBE_TIMEOUT" sinfo -N -o '%N %t %E' 2>&1 || true
            grep -hiE 'error|fatal' "$LC_STATE"/logs/slurmd-*.log 2>/dev/null | tail -n 20
            ;;
    esac
}

# wait_for NAME: poll probe_NAME every 0.2 s until the shared deadline.
wait_for() {
    local name=$1
    poll_until $((LC_DEADLINE - SECONDS)) 0.2 "probe_$name" && return 0
    log "not ready: probe '$name' still failing after ${LC_READY_TIMEOUT}s. Last log lines:"
    probe_logs "$name" >&2
    exit 1
}

wait_ready() {
    LC_DEADLINE=$((SECONDS + LC_READY_TIMEOUT))
    wait_for munge
    wait_for ctld
    wait_for nodes
}
