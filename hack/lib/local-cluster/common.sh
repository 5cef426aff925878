# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared settings and helpers of hack/local-cluster.
# The settings are used by the other files of this directory.
# shellcheck disable=SC2034

LC_STATE=${SLURM_JAIL_LOCAL_DIR:-/var/lib/slurm-jail-local}
LC_SUBNET=${SLURM_JAIL_LOCAL_SUBNET:-10.213.57}
# One bridge per state directory, so that two local clusters on one machine
# (e.g. the benchmarks' and the tests') never share or delete each other's.
LC_BRIDGE=${SLURM_JAIL_LOCAL_BRIDGE:-sjbr$(printf '%s' "$LC_STATE" | sha256sum | cut -c1-4)}
# Debian's multiarch library directory name (x86_64-linux-gnu on amd64).
# Exported, so that ns-init (which sources this file too) need not ask again.
# shellcheck source=hack/lib/debian-arch.sh
. "$(dirname "${BASH_SOURCE[0]}")/../debian-arch.sh"
LC_MULTIARCH=${LC_MULTIARCH:-$(host_multiarch)}
export LC_MULTIARCH
# Slurm's PluginDir on Debian.
LC_PLUGIN_DIR=/usr/lib/$LC_MULTIARCH/slurm-wlm
# The Slurm release the cluster runs ('up --slurm REL', recorded in the state
# directory; default: this machine's own) and, for a release other than this
# machine's, the root filesystem its daemons run in (hack/release-rootfs).
LC_RELEASE_FILE=$LC_STATE/release
LC_RELEASE_ROOTFS_FILE=$LC_STATE/release-rootfs
# release_rootfs: the recorded release's rootfs, or nothing (this machine's).
release_rootfs() { cat "$LC_RELEASE_ROOTFS_FILE" 2>/dev/null || true; }
# The test users: LC_USER, LC_UID, LC_GROUP_EXTRA, LC_USER2, ...
# shellcheck source=hack/lib/local-cluster/users.sh
. "$(dirname "${BASH_SOURCE[0]}")/users.sh"
LC_CLUSTER=sjlocal
# yes: slurm.conf has JobContainerType=job_container/slurm_jail (the
# documented setup); no: chroot.so alone makes each job's namespaces (the
# benchmarks switch the plugin off per step, which a job container forbids).
LC_JOB_CONTAINER=${SLURM_JAIL_LOCAL_JOB_CONTAINER:-yes}
# PrologFlags=Contain (an extern step per job): with the job container by
# default; SLURM_JAIL_LOCAL_CONTAIN=yes adds it to chroot.so alone.
LC_CONTAIN=${SLURM_JAIL_LOCAL_CONTAIN:-$LC_JOB_CONTAINER}
# Where a worker has what chroot.so's defaults expect (docs/contract.md);
# ns-init binds the cluster's directories onto them.
LC_JAIL_MOUNTPOINT=/mnt/jail
LC_MUNGE_DIR=/run/munge
LC_NODE_STATE_DIR=/run/slurm-jail
LC_SPOOL_DIR=/var/spool/slurmd
LC_NODE_TMP_DIR=/var/lib/slurm-jail/tmp
# yes: proctrack/cgroup and task/cgroup with ConstrainRAMSpace (cgroup v1),
# so that --mem is enforced; no (default): task/none, and proctrack/cgroup
# with PrologFlags=Contain (which Slurm requires there), else linuxproc.
LC_CGROUP=${SLURM_JAIL_LOCAL_CGROUP:-no}
# Each node's RealMemory in MB (default: none, or 4096 with
# SLURM_JAIL_LOCAL_CGROUP=yes): what jobs may ask for with --mem; without
# cgroups nothing enforces it.
LC_NODE_MEMORY=${SLURM_JAIL_LOCAL_NODE_MEMORY:-}
# slurm.conf's SchedulerType: the builtin scheduler (first in, first out)
# by default; Slurm's own tests of heterogeneous jobs want sched/backfill.
LC_SCHEDULER=${SLURM_JAIL_LOCAL_SCHEDULER:-sched/builtin}
# The plugstack line, exactly as the README tells admins to write it.
LC_PLUGSTACK_LINE='required chroot.so jail=/mnt/jail'
# More key=value settings for that line (tests of job_tmp_size= and the like).
LC_PLUGSTACK_EXTRA=${SLURM_JAIL_LOCAL_PLUGSTACK_EXTRA:-}
# Where the jail lives: local (a directory of this machine, every host binds
# it) or glusterfs (a GlusterFS volume served by a storage host, mounted over
# FUSE by every host; storage.sh). 'up --jail-fs' records it.
LC_JAIL_FS_FILE=$LC_STATE/jail-fs
jail_fs() { cat "$LC_JAIL_FS_FILE" 2>/dev/null || echo local; }
shared_jail() { [ "$(jail_fs)" = glusterfs ]; }
LC_JAIL_FILESYSTEMS=(local glusterfs)
LC_VOLUME=jail
# Seconds before the volume's clients give up on a server that stopped
# answering (GlusterFS's default is 42).
LC_STORAGE_PING_TIMEOUT=${SLURM_JAIL_LOCAL_STORAGE_PING_TIMEOUT:-10}
storage_addr() { echo "$LC_SUBNET.4"; }
# Mount points on the host that the node namespaces bind onto.
LC_HOST_MOUNTPOINTS=("$LC_JAIL_MOUNTPOINT" "$LC_MUNGE_DIR" "$LC_NODE_STATE_DIR" "$LC_SPOOL_DIR"
    "$LC_NODE_TMP_DIR")
# The plugstack line, exactly as the README tells admins to write it.
LC_PLUGSTACK_LINE="required chroot.so jail=$LC_JAIL_MOUNTPOINT"

log() { printf 'local-cluster: %s\n' "$*" >&2; }
die() {
    printf 'local-cluster: %s\n' "$*" >&2
    exit 1
}

require_root() {
    [ "$(id -u)" -eq 0 ] || die "run as root (it creates namespaces, mounts and users): log in as root (or su -), then: $0 $*"
}

# Node names: node1..nodeN; their addresses follow the controller's.
node_name() { echo "node$1"; }
node_addr() { echo "$LC_SUBNET.$((10 + $1))"; }
ctld_addr() { echo "$LC_SUBNET.10"; }
login_addr() { echo "$LC_SUBNET.5"; }

workers() { cat "$LC_STATE/workers" 2>/dev/null || echo 0; }

# Take the cluster lock for the rest of this process.
take_lock() {
    install -d -m 0755 "$LC_STATE"
    exec 8>"$LC_STATE/lock"
    flock -w 300 8 || die "another local-cluster command has held $LC_STATE/lock for 5 minutes; see: ps -ef | grep local-cluster"
}

# Read a pid file and print the pid if that process is alive.
live_pid() {
    local pid
    # The first line: from Slurm 24.11 on, a reconfigured daemon rewrites its
    # pid file without truncating it (a longer old pid leaves its tail).
    pid=$(head -n 1 "$1" 2>/dev/null) || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}
