# A private Slurm cluster for the health tests: its own munged (own key and
# socket), one slurmctld on 127.0.0.1:17817 and one slurmd (node n1) on
# 127.0.0.1:17818, all state under $SJH_CLUSTER. Node n2 is defined but never
# started, so it shows up as unresponsive/down. Source it, then call
# cluster_start / cluster_stop. Needs root.

# cluster_start [DIR]: DIR (default: a new temp dir) holds everything.
cluster_start() {
    SJH_CLUSTER=${1:-$(mktemp -d /tmp/sjh-cluster.XXXXXX)}
    export SJH_CLUSTER
    local d=$SJH_CLUSTER
    chmod 0755 "$d"
    mkdir -p "$d/state" "$d/spool" "$d/log" "$d/munge"
    chown munge:munge "$d/munge"
    mungekey -c -f -k "$d/munge/munge.key"
    chown munge:munge "$d/munge/munge.key"
    chmod 0400 "$d/munge/munge.key"
    runuser -u munge -- /usr/sbin/munged --key-file="$d/munge/munge.key" \
        --socket="$d/munge/munge.socket" --pid-file="$d/munge/munged.pid" \
        --log-file="$d/munge/munged.log" --seed-file="$d/munge/seed" --force || {
        echo "munged did not start" >&2
        return 1
    }
    local host
    host=$(hostname)
    cat >"$d/slurm.conf" <<CONF
ClusterName=sjhtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=17817
SlurmdPort=17818
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd-%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
MailProg=/bin/true
ReturnToService=2
SlurmdTimeout=30
PlugStackConfig=$d/plugstack.conf
${SJH_EXTRA_CONF:-}
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=17818 CPUs=1 State=UNKNOWN ${SJH_N1_EXTRA:-}
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=17899 CPUs=1 State=UNKNOWN
PartitionName=main Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
CONF
    : >"$d/plugstack.conf"
    export SLURM_CONF=$d/slurm.conf
    mkdir -p "$d/spool/n1"
    slurmctld -f "$d/slurm.conf"
    slurmd -f "$d/slurm.conf" -N n1

    for _ in $(seq 1 100); do
        if sinfo -h -n n1 -o '%T' 2>/dev/null | grep -qE '^(idle|drained|draining|mixed)'; then
            return 0
        fi
        sleep 0.2
    done
    echo "cluster did not come up; logs in $d/log" >&2
    tail -n 20 "$d/log/"*.log >&2 || true
    return 1
}

_kill_pidfile() {
    local f=$1 pid
    [ -f "$f" ] || return 0
    pid=$(cat "$f")
    [ -n "$pid" ] || return 0
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
}

cluster_stop() {
    [ -n "${SJH_CLUSTER:-}" ] && [ -d "$SJH_CLUSTER" ] || return 0
    local d=$SJH_CLUSTER
    _kill_pidfile "$d/slurmd-n1.pid"
    _kill_pidfile "$d/slurmctld.pid"
    _kill_pidfile "$d/munge/munged.pid"
    rm -rf "$d"
    unset SJH_CLUSTER
}
