# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Slurm daemons started by hand (no systemd): the slurm.conf lines every
# cluster here shares, munged, slurmctld and slurmd, waiting until they
# answer, and stopping them. Sourced by hack/local-cluster, the smoke tests'
# node (tests/smoke/node.bash) and the health tests' cluster
# (tests/health/cluster.bash); each says where its files live.
#
# RUN arguments: a command prefix that runs its arguments where the daemon
# belongs (a namespace), split on spaces ("in_node", "in_ns worker node1"),
# or "command" to run them here.

# slurm_conf_common PLUGSTACK SPOOL: the slurm.conf lines of every cluster
# here: daemons as root, munge, chroot.so through PLUGSTACK; no cgroups
# unless LC_CGROUP=yes, except proctrack/cgroup with LC_CONTAIN=yes: Slurm
# wants it for PrologFlags=Contain (slurmctld logs an error otherwise), and it
# keeps every process of the job, the extern step's included, in the job's
# cgroup (cgroup v1 here).
slurm_conf_common() {
    local cgroup=${LC_CGROUP:-no} proctrack=proctrack/linuxproc
    if [ "$cgroup" = yes ] || [ "${LC_CONTAIN:-no}" = yes ]; then proctrack=proctrack/cgroup; fi
    cat <<CONF
SlurmUser=root
AuthType=auth/munge
ProctrackType=$proctrack
TaskPlugin=$([ "$cgroup" = yes ] && echo task/cgroup || echo task/none)
SelectType=select/cons_tres
MailProg=/bin/true
ReturnToService=2
PlugStackConfig=$1
SlurmdSpoolDir=$2
CONF
}

# make_munge_key KEY: a new key owned by munge and readable by it alone;
# a key already there is kept.
make_munge_key() {
    [ -s "$1" ] && return 0
    mungekey -c -f -k "$1"
    chown munge:munge "$1"
    chmod 0400 "$1"
}

# launch_munged RUN KEY SOCKET PIDFILE LOG SEED [MUNGED_ARGS...]: munged as
# the munge user; returns once it listens (munged daemonizes after that).
launch_munged() {
    local run=$1 key=$2 socket=$3 pidfile=$4 log=$5 seed=$6
    shift 6
    # shellcheck disable=SC2086 # RUN is a prefix of several words
    $run runuser -u munge -- /usr/sbin/munged --key-file="$key" --socket="$socket" \
        --pid-file="$pidfile" --log-file="$log" --seed-file="$seed" "$@"
}

# launch_slurm_daemon RUN DAEMON CONF [ARGS...]: `DAEMON ARGS -f CONF`
# (slurmctld or slurmd; that command line is what pgrep finds). CONF must be
# an absolute path: with a relative one slurmd retries for a minute,
# "cannot stat file".
launch_slurm_daemon() {
    local run=$1 daemon=$2 conf=$3
    shift 3
    case $conf in
        /*) ;;
        *)
            echo "launch_slurm_daemon: $daemon needs an absolute slurm.conf path, got '$conf'" >&2
            return 1
            ;;
    esac
    # shellcheck disable=SC2086 # RUN is a prefix of several words
    $run "$daemon" "$@" -f "$conf"
}

# Microseconds since the epoch (locale-proof: the separator is dropped).
epoch_us() { echo "${EPOCHREALTIME//[!0-9]/}"; }

# poll_until SECONDS INTERVAL CMD...: run CMD every INTERVAL seconds until it
# succeeds (0) or SECONDS have passed (1).
poll_until() {
    local deadline
    deadline=$(($(epoch_us) + $1 * 1000000))
    local interval=$2
    shift 2
    until "$@"; do
        [ "$(epoch_us)" -lt "$deadline" ] || return 1
        sleep "$interval"
    done
}

# stop_pidfile PIDFILE [SECONDS]: TERM the process named in PIDFILE, KILL it
# if it still runs after SECONDS (default 10). Nothing to do without one.
stop_pidfile() {
    local pid
    pid=$(head -n 1 "$1" 2>/dev/null) || return 0 # a reconfigured daemon leaves a tail below
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
    kill "$pid" 2>/dev/null || true
    poll_until "${2:-10}" 0.1 process_gone "$pid" || kill -KILL "$pid" 2>/dev/null || true
}

process_gone() { ! kill -0 "$1" 2>/dev/null; }

# hold_mount_namespace DIR: a private mount namespace (host mounts still
# propagate into it), held by a `sleep` whose pid goes to DIR/holder.pid;
# its id goes to DIR/namespaces for kill_namespace_members.
hold_mount_namespace() {
    local dir=$1 pid
    unshare --mount --propagation slave sleep infinity &
    pid=$!
    echo "$pid" >"$dir/holder.pid"
    # Until unshare has exec'd sleep, the pid is still in this namespace.
    poll_until 10 0.05 holder_is_sleep "$pid" || {
        echo "hold_mount_namespace: unshare did not start" >&2
        return 1
    }
    stat -L -c %i "/proc/$pid/ns/mnt" >"$dir/namespaces"
}

holder_is_sleep() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ]; }

# in_held_namespace DIR CMD...: CMD in DIR's held mount namespace, or here
# when DIR holds none.
in_held_namespace() {
    local dir=$1
    shift
    if [ -f "$dir/holder.pid" ]; then
        nsenter --target "$(cat "$dir/holder.pid")" --mount -- "$@"
    else
        "$@"
    fi
}

# record_jail_namespaces DIR NSFILE: add chroot.so's namespaces, read in
# DIR's held namespace, to DIR/namespaces: the node's (NSFILE, from
# state=STATE: STATE/ns), each job's views (slurmstepd's thread joins one, the
# tasks the other) and each job's PID namespace (its init), so that
# kill_namespace_members ends job steps and jobs' inits too.
record_jail_namespaces() {
    local dir=$1 nsfile=$2
    [ -f "$dir/holder.pid" ] || return 0
    # shellcheck disable=SC2016 # expanded by the inner sh
    in_held_namespace "$dir" sh -c 'stat -L -c %i "$1" "$2"/*/stepd "$2"/*/tasks "$2"/*/pid' sh \
        "$nsfile" "$(dirname "$nsfile")/jobs" >>"$dir/namespaces" 2>/dev/null || true
}

# kill_namespace_members DIR: KILL every process whose mount or PID namespace
# is listed in DIR/namespaces (the holder, the daemons, job steps). Works
# from the ids recorded at start, so it also cleans up after a killed run.
kill_namespace_members() {
    local list=$1/namespaces pid ns
    [ -f "$list" ] || return 0
    # Never this machine's own namespaces (a list read too early holds them).
    ns=$(stat -L -c %i /proc/self/ns/mnt /proc/self/ns/pid
        stat -L -c %i /proc/1/ns/mnt /proc/1/ns/pid 2>/dev/null || true)
    if grep -qxFf "$list" <<<"$ns"; then
        echo "kill_namespace_members: $list names this machine's own namespace; nothing killed" >&2
        return 1
    fi
    for pid in /proc/[0-9]*; do
        pid=${pid#/proc/}
        ns=$(stat -L -c %i "/proc/$pid/ns/mnt" "/proc/$pid/ns/pid" 2>/dev/null) || continue
        if grep -qxFf "$list" <<<"$ns"; then
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    sleep 0.3
}
