# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Starting and stopping munged, slurmctld and the slurmd nodes, each in its
# own namespaces, with hack/lib/slurm-daemons.sh (sourced by hack/local-cluster).

# in_ns ROLE NAME CMD...: run CMD as host NAME (its netns, a new mount and
# UTS namespace prepared by ns-init). Daemons must not inherit the lock (fd 8).
in_ns() {
    local role=$1 name=$2
    shift 2
    nsenter --net="$(netns_file "$name")" -- \
        unshare --mount --uts --propagation private -- \
        "$LC_LIB/ns-init" "$role" "$name" -- "$@" 8>&-
}

munge_socket() { echo "$LC_STATE/munge/munge.socket.2"; }
munged_log() { echo "$LC_STATE/munge-etc/munged.log"; }

# without_lock CMD...: CMD here, without the cluster lock (fd 8).
without_lock() { "$@" 8>&-; }

# in_release_root CMD...: CMD, without the cluster lock, in a mount namespace
# of its own whose root is the cluster release's rootfs (this machine's users
# and the cluster state bound in); here when the cluster runs this machine's
# release. /etc/hosts: munged names this host's address in credentials.
in_release_root() {
    local rootfs
    rootfs=$(release_rootfs)
    if [ -z "$rootfs" ]; then
        "$@" 8>&-
        return
    fi
    unshare --mount --propagation private -- "$LC_LIB/../release-root-exec" "$rootfs" \
        --bind "$LC_STATE" --bind /etc/passwd --bind /etc/group --bind /etc/hosts -- "$@" 8>&-
}

start_munged() {
    local etc=$LC_STATE/munge-etc
    install -d -o munge -g munge -m 0755 "$LC_STATE/munge"
    install -d -o munge -g munge -m 0700 "$etc"
    make_munge_key "$etc/munge.key"
    live_pid "$LC_STATE/munge/munged.pid" >/dev/null && return 0
    launch_munged in_release_root "$etc/munge.key" "$(munge_socket)" "$LC_STATE/munge/munged.pid" \
        "$(munged_log)" "$etc/munged.seed" ||
        die "munged did not start: $(tail -3 "$(munged_log)" 2>/dev/null)"
}

ctld_pid() { live_pid "$LC_STATE/ctld/slurmctld.pid"; }

# -c: a cluster that was down has no jobs left to recover, and a drain left
# from an earlier run (say, a failed epilog) must not survive into this one.
start_ctld() {
    ctld_pid >/dev/null && return 0
    launch_slurm_daemon "in_ns ctld ctld" slurmctld /etc/slurm/slurm.conf -c ||
        die "slurmctld did not start; see: $0 logs ctld"
}

slurmd_pid() { live_pid "$LC_STATE/nodes/$1/spool/slurmd.pid"; }

start_slurmd() {
    local name=$1 dir=$LC_STATE/nodes/$1
    install -d -m 0755 "$dir" "$dir/spool" "$dir/run"
    install -d -m 1777 "$dir/tmp"
    slurmd_pid "$name" >/dev/null && return 0
    launch_slurm_daemon "in_ns worker $name" slurmd /etc/slurm/slurm.conf ||
        die "slurmd on $name did not start; see: $0 logs $name"
}

# ctl_exec CMD...: run an admin command as root next to slurmctld.
ctl_exec() {
    local pid
    pid=$(ctld_pid) || die "slurmctld is not running; start the cluster: $0 up"
    nsenter -t "$pid" -m -u -n -- "$@"
}

# Every process inside one of the cluster's network namespaces
# (slurmstepd, job tasks, logins).
cluster_pids() {
    local f ids=() p ns
    for f in "$LC_STATE"/netns/*; do
        mountpoint -q "$f" 2>/dev/null && ids+=("net:[$(stat -L -c %i "$f")]")
    done
    [ ${#ids[@]} -gt 0 ] || return 0
    for p in /proc/[0-9]*; do
        ns=$(readlink "$p/ns/net" 2>/dev/null) || continue
        printf '%s\n' "${ids[@]}" | grep -qxF "$ns" && echo "${p#/proc/}"
    done
    return 0
}

stop_all() {
    local i name pids
    for ((i = 1; i <= $(workers); i++)); do
        name=$(node_name "$i")
        stop_pidfile "$LC_STATE/nodes/$name/spool/slurmd.pid"
    done
    stop_pidfile "$LC_STATE/ctld/slurmctld.pid"
    # Again until none is left: a process started while the last scan ran
    # (a daemon forking) is found by the next one.
    local round
    for round in 1 2 3 4 5; do
        pids=$(cluster_pids; client_pids)
        [ -n "$pids" ] || break
        [ "$round" -lt 5 ] || log "processes of the cluster still running after 4 kills: $(tr "\n" " " <<<"$pids")"
        # shellcheck disable=SC2086 # one pid per word
        kill -KILL $pids 2>/dev/null || true
        sleep 0.5
    done
    stop_pidfile "$LC_STATE/munge/munged.pid"
    # The storage host and every client of the jail's volume were in the
    # cluster's networks; this machine's mount of it is left without one.
    unmount_jail_here
}

# What the cluster's jobs left on its nodes, once every process is gone:
# chroot.so's state directory of each node (every job's jobs/ entry, its
# job_tmp= directory when configured there, the node's namespace files).
# Their mounts went with the nodes' mount namespaces; a directory that still
# has one on the host is left alone.
remove_node_state() {
    local d
    for d in "$LC_STATE"/nodes/*/run; do
        [ -d "$d" ] || continue
        if findmnt -rn -o TARGET | grep -q "^$d/"; then
            log "mounts remain under $d; not removing what jobs left there"
            continue
        fi
        find "$d" -mindepth 1 -maxdepth 1 -exec rm -rf --one-file-system {} +
    done
    remove_pyxis_node_state
}
