# SPDX-License-Identifier: Apache-2.0
# A private Slurm cluster for the health tests: its own munged (own key and
# socket), one slurmctld on 127.0.0.1:17817 and one slurmd (node n1) on
# 127.0.0.1:17818 (SJH_CTLD_PORT, SJH_N1_PORT to run beside another copy), all
# state under $SJH_CLUSTER. Node n2 is defined but never
# started, so it shows up as unresponsive/down. Source it, then call
# cluster_start / cluster_stop. Needs root.
#
# Layout: etc/slurm.conf and etc/plugstack.conf (SLURM_CONF is exported),
# munge/ (the socket), munge.key, state/, spool/n1/, log/.
# Settings, read by cluster_start:
#   SJH_EXTRA_CONF   more slurm.conf lines
#   SJH_N1_EXTRA     more words for n1's NodeName line
#   SJH_PLUGSTACK    the plugstack.conf text (default: empty)
#   SJH_PRIVATE_NS   1: run the daemons in a mount namespace of their own, so
#                    that mounts made for jobs (chroot.so's) never show on the host
#   SJH_JAIL_NS_FILE with SJH_PRIVATE_NS: chroot.so's namespace file (state=DIR/ns);
#                    job steps left in that namespace, and every job's init
#                    and slurmstepd (in the job's namespaces, state=DIR/jobs/),
#                    are killed at the end too
# Starting, waiting for and stopping the daemons: hack/lib/slurm-daemons.sh.

# shellcheck source=hack/lib/slurm-daemons.sh
. "${SLURM_JAIL_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/hack/lib/slurm-daemons.sh"

# cluster_start [DIR]: DIR (default: a new temp dir) holds everything.
cluster_start() {
    SJH_CLUSTER=${1:-$(mktemp -d /tmp/sjh-cluster.XXXXXX)}
    export SJH_CLUSTER
    local d=$SJH_CLUSTER
    chmod 0755 "$d"
    mkdir -p "$d/etc" "$d/state" "$d/spool/n1" "$d/log" "$d/munge"
    chown munge:munge "$d/munge"
    make_munge_key "$d/munge.key"
    if [ "${SJH_PRIVATE_NS:-0}" = 1 ]; then
        hold_mount_namespace "$d"
    fi
    launch_munged _in_cluster_ns "$d/munge.key" "$d/munge/munge.socket" "$d/munge/munged.pid" \
        "$d/munge/munged.log" "$d/munge/seed" --force || {
        echo "munged did not start" >&2
        return 1
    }
    _write_slurm_conf "$d"
    printf '%s\n' "${SJH_PLUGSTACK:-}" >"$d/etc/plugstack.conf"
    export SLURM_CONF=$d/etc/slurm.conf
    launch_slurm_daemon _in_cluster_ns slurmctld "$d/etc/slurm.conf"
    launch_slurm_daemon _in_cluster_ns slurmd "$d/etc/slurm.conf" -N n1
    poll_until 20 0.2 _n1_up && return 0
    echo "cluster did not come up; logs in $d/log" >&2
    tail -n 20 "$d/log/"*.log >&2 || true
    return 1
}

# _write_slurm_conf DIR: DIR/etc/slurm.conf
_write_slurm_conf() {
    local d=$1 host
    host=$(hostname)
    {
        cat <<CONF
ClusterName=sjhtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${SJH_CTLD_PORT:-17817}
SlurmdPort=${SJH_N1_PORT:-17818}
CONF
        slurm_conf_common "$d/etc/plugstack.conf" "$d/spool/%n"
        cat <<CONF
AuthInfo=socket=$d/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$d/state
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd-%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
SlurmdTimeout=30
${SJH_EXTRA_CONF:-}
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=${SJH_N1_PORT:-17818} CPUs=1 State=UNKNOWN ${SJH_N1_EXTRA:-}
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=17899 CPUs=1 State=UNKNOWN
PartitionName=main Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
CONF
    } >"$d/etc/slurm.conf"
}

_n1_up() { sinfo -h -n n1 -o '%T' 2>/dev/null | grep -qE '^(idle|drained|draining|mixed)'; }

# node state and reason as sinfo shows them, without the not-responding '*'
# that follows every drain/resume until slurmctld's next ping:
# "drained|slurm-jail-health: ..."
node_info() { sinfo -h -N -n "$1" -o '%T|%E' | sed 's/^\([a-z]*\)\*|/\1|/'; }

# wait_state NODE REGEX: until sinfo's state for NODE matches (max 20 s)
wait_state() {
    local node=$1 want=$2
    poll_until 20 0.2 _state_is "$node" "$want" && return 0
    echo "node $node is $(node_info "$node"), wanted $want" >&2
    return 1
}

_state_is() { [[ "$(sinfo -h -N -n "$1" -o '%T')" =~ ^($2)$ ]]; }

# Runs a command in the daemons' mount namespace (or here without one).
_in_cluster_ns() { in_held_namespace "$SJH_CLUSTER" "$@"; }

# Every process left in the private namespace (job steps), by the namespace
# recorded at start, then the holder itself.
_kill_namespace() {
    [ -f "$SJH_CLUSTER/namespaces" ] || return 0
    if [ -n "${SJH_JAIL_NS_FILE:-}" ]; then
        record_jail_namespaces "$SJH_CLUSTER" "$SJH_JAIL_NS_FILE"
    fi
    kill_namespace_members "$SJH_CLUSTER"
}

cluster_stop() {
    [ -n "${SJH_CLUSTER:-}" ] && [ -d "$SJH_CLUSTER" ] || return 0
    local d=$SJH_CLUSTER
    stop_pidfile "$d/slurmd-n1.pid" 5
    stop_pidfile "$d/slurmctld.pid" 5
    stop_pidfile "$d/munge/munged.pid" 5
    _kill_namespace
    rm -rf "$d"
    unset SJH_CLUSTER
}
