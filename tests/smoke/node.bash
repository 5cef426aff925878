# SPDX-License-Identifier: Apache-2.0
# One real Slurm node (munged, slurmctld, slurmd from Debian) with chroot.so,
# all inside a private mount namespace held by a `sleep` process, so the
# host's /etc/slurm, /run/munge and spool are never touched.
# Sourced by smoke.bats. The slurm.conf basics, the plugin's paths and the
# test user's setup come from the local cluster's own library; starting,
# waiting for and stopping the daemons from hack/lib/slurm-daemons.sh.

# The local cluster's libraries sourced below find the tree through LC_ROOT.
# shellcheck disable=SC2034
LC_ROOT=$SLURM_JAIL_ROOT
# shellcheck source=hack/lib/local-cluster/common.sh
. "$SLURM_JAIL_ROOT/hack/lib/local-cluster/common.sh"
# shellcheck source=hack/lib/local-cluster/config.sh
. "$SLURM_JAIL_ROOT/hack/lib/local-cluster/config.sh"
# shellcheck source=hack/lib/local-cluster/jail.sh
. "$SLURM_JAIL_ROOT/hack/lib/local-cluster/jail.sh"
# shellcheck source=hack/lib/slurm-daemons.sh
. "$SLURM_JAIL_ROOT/hack/lib/slurm-daemons.sh"

# shellcheck source=hack/lib/slurm-releases.sh
. "$SLURM_JAIL_ROOT/hack/lib/slurm-releases.sh"

SMOKE=/var/lib/slurm-jail-smoke
# A file on the node's own root only (never in the jail) that every user can
# reach, wherever the checkout is (below /root, users reach nothing).
HOST_ONLY_FILE=$SMOKE/etc/slurm.conf
SMOKE_USER=sjsmoke
SMOKE_UID=5101
SMOKE_GROUP2=sjsmokegrp
SMOKE_GID2=5102
# The second user of the local cluster's setup: the smoke test's own, not
# the local cluster's (which may be up beside it).
SMOKE_USER2=sjsmoke2
SMOKE_UID2=5103
PLUGIN_DIR=$LC_PLUGIN_DIR
PLUGSTACK_LINE=$LC_PLUGSTACK_LINE
# chroot.so alone: no job container, so no PrologFlags=Contain and none of
# the proctrack/cgroup that the local cluster sets up for it.
LC_CONTAIN=no
# SLURM_JAIL_SMOKE_SLURM=REL: the node runs Slurm REL's daemons, from that
# release's root (hack/release-rootfs), with the chroot.so of
# SLURM_JAIL_BUILD_DIR (built against REL: hack/build-release) and a jail of
# REL's Debian suite. Default: this machine's Slurm.
SMOKE_RELEASE=${SLURM_JAIL_SMOKE_SLURM:-}
[ "$SMOKE_RELEASE" != "$(host_release)" ] || SMOKE_RELEASE=

# Runs a command inside the node's mount namespace, from its root (for
# another release, the release's root: release-root-exec pivoted into it).
in_node() { nsenter --target "$(cat "$SMOKE/holder.pid")" --mount -- "$@"; }

# Runs a command as the test user, from the user's home (the jail's /home).
as_user() {
    # shellcheck disable=SC2016 # expanded by the inner shell
    in_node runuser -u "$SMOKE_USER" -- sh -c 'cd "$HOME" && exec "$@"' sh "$@"
}

write_smoke_conf() {
    {
        cat <<CONF
ClusterName=smoke
SlurmctldHost=$(hostname)
SlurmctldPort=16817
SlurmdPort=16818
CONF
        slurm_conf_base
        cat <<CONF
StateSaveLocation=$SMOKE/ctld
SlurmctldPidFile=$SMOKE/run/slurmctld.pid
SlurmdPidFile=$SMOKE/run/slurmd.pid
SlurmctldLogFile=$SMOKE/log/slurmctld.log
SlurmdLogFile=$SMOKE/log/slurmd.log
SlurmdDebug=debug
NodeName=smoke1 NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
    } >"$SMOKE/etc/slurm.conf"
    echo "$PLUGSTACK_LINE" >"$SMOKE/etc/plugstack.conf"
}

# The local cluster's user setup, with the smoke test's user.
as_smoke_user() {
    LC_USER=$SMOKE_USER LC_UID=$SMOKE_UID LC_GROUP_EXTRA=$SMOKE_GROUP2 LC_GID_EXTRA=$SMOKE_GID2 \
        LC_USER2=$SMOKE_USER2 LC_UID2=$SMOKE_UID2 "$@"
}

create_user() { as_smoke_user add_user_to_host; }

# The jail: the cached mmdebstrap rootfs on a tmpfs, plus the plugin (srun in
# the jail loads plugstack.conf too) and the test user.
make_jail() {
    local tarball=$1 jail=$2
    tar -C "$jail" -xf "$tarball"
    install -m 0644 "$SLURM_JAIL_BUILD_DIR/plugin/chroot/chroot.so" "$jail$PLUGIN_DIR/chroot.so"
    add_user_to_jail "$jail"
    install -d -o "$LC_UID" -g "$LC_UID" "$jail/opt/results"
}

# Inside the namespace: tmpfs for the jail and /run, then the node's binds.
setup_namespace() {
    local tarball=$1
    in_node mount -t tmpfs -o mode=0755 smoke-jail /mnt
    in_node mkdir /mnt/jail
    in_node bash -c "$(declare -f make_jail add_user_to_jail add_line); \
        LC_USER=$SMOKE_USER LC_UID=$SMOKE_UID LC_GROUP_EXTRA=$SMOKE_GROUP2 \
        LC_GID_EXTRA=$SMOKE_GID2 LC_USER2=$SMOKE_USER2 LC_UID2=$SMOKE_UID2 PLUGIN_DIR=$PLUGIN_DIR \
        SLURM_JAIL_BUILD_DIR=$SLURM_JAIL_BUILD_DIR make_jail $tarball /mnt/jail"
    in_node mount -t tmpfs -o mode=0755 smoke-run /run
    # Another release's root is a shared cached copy: nothing is left in it.
    if [ -n "$SMOKE_RELEASE" ]; then in_node mount -t tmpfs -o mode=1777 smoke-tmp /tmp; fi
    in_node install -d -o munge -g munge -m 0755 /run/munge
    in_node mkdir -p /run/slurm-jail
    in_node mkdir -p /etc/slurm /var/lib/slurm-jail/tmp
    in_node mount --bind "$SMOKE/etc" /etc/slurm
    # The node's own /var/spool: the host may have no /var/spool/slurmd.
    in_node mount -t tmpfs -o mode=0755 smoke-spool /var/spool
    in_node mkdir /var/spool/slurmd
    in_node mount --bind "$SMOKE/spool" /var/spool/slurmd
    in_node mount --bind "$SMOKE/nodetmp" /var/lib/slurm-jail/tmp
    in_node mount --bind /mnt/jail/home /home
    # slurmd loads chroot.so from its PluginDir: a copy of Debian's (the
    # release's) with ours added.
    cp -a "${SMOKE_ROOTFS:-}$PLUGIN_DIR/." "$SMOKE/plugins/"
    install -m 0644 "$SLURM_JAIL_BUILD_DIR/plugin/chroot/chroot.so" "$SMOKE/plugins/chroot.so"
    in_node mount --bind "$SMOKE/plugins" "$PLUGIN_DIR"
}

start_daemons() {
    make_munge_key "$SMOKE/munge.key"
    install -d -o munge -g munge "$SMOKE/munge"
    launch_munged in_node "$SMOKE/munge.key" /run/munge/munge.socket.2 \
        "$SMOKE/munge/munged.pid" "$SMOKE/munge/munged.log" "$SMOKE/munge/munged.seed"
    launch_slurm_daemon in_node slurmctld /etc/slurm/slurm.conf
    launch_slurm_daemon in_node slurmd /etc/slurm/slurm.conf -N smoke1
}

node_idle() { in_node sinfo -h -o '%T' 2>/dev/null | grep -qx idle; }

wait_ready() {
    poll_until 10 0.1 node_idle && return 0
    echo "node did not become idle; slurmd log:" >&2
    tail -20 "$SMOKE/log/slurmd.log" >&2
    return 1
}

node_up() {
    node_down
    mkdir -p "$SMOKE"
    chmod 0755 "$SMOKE"
    mkdir -p "$SMOKE"/{etc,spool,nodetmp,plugins,ctld,run,log}
    chmod 1777 "$SMOKE/nodetmp"
    # The host's own /var/lib/slurm-jail, made here only when missing (the
    # node's root is the host's): node_down removes what was made.
    [ -d /var/lib/slurm-jail ] || touch "$SMOKE/made-var-lib-slurm-jail"
    mkdir -p /var/lib/slurm-jail/tmp
    create_user
    write_smoke_conf
    local tarball
    if [ -n "$SMOKE_RELEASE" ]; then
        # The local cluster's jail for that release (the same cache entry).
        SMOKE_ROOTFS=$("$SLURM_JAIL_ROOT/hack/release-rootfs" "$SMOKE_RELEASE") || return 1
        tarball=$("$SLURM_JAIL_ROOT/hack/jail-rootfs" --include libmpich12 --slurm "$SMOKE_RELEASE") || return 1
        hold_release_namespace "$SMOKE_ROOTFS" "$(dirname "$tarball")"
    else
        tarball=$("$SLURM_JAIL_ROOT/hack/jail-rootfs") || return 1
        hold_mount_namespace "$SMOKE"
    fi
    setup_namespace "$tarball"
    start_daemons
    wait_ready || return 1
    in_node stat -L -c %i /run/slurm-jail/ns >>"$SMOKE/namespaces"
}

# hold_release_namespace ROOTFS CACHE: like hold_mount_namespace, with the
# release's root as the namespace's root; the smoke directory, the checkout,
# the build, the jail cache and this machine's users are bound in.
hold_release_namespace() {
    local rootfs=$1 cache=$2 pid
    unshare --mount --propagation private -- "$SLURM_JAIL_ROOT/hack/lib/release-root-exec" "$rootfs" \
        --bind "$SMOKE" --bind "$SLURM_JAIL_ROOT" --bind "$SLURM_JAIL_BUILD_DIR" --bind "$cache" \
        --bind /etc/passwd --bind /etc/group --bind /etc/hosts -- sleep infinity &
    pid=$!
    echo "$pid" >"$SMOKE/holder.pid"
    # Ready once release-root-exec has made the root and become the sleep;
    # only then is the namespace read (before, it may still be this one).
    poll_until 10 0.1 holder_is_sleep "$pid" || {
        echo "the release root for Slurm $SMOKE_RELEASE did not come up" >&2
        kill "$pid" 2>/dev/null
        return 1
    }
    stat -L -c %i "/proc/$pid/ns/mnt" >"$SMOKE/namespaces"
}

# Every process in the node's mount namespace, in its jail namespace
# (slurmstepd moves itself into the latter) or in a job's namespaces (a job's
# init) is killed, by the namespace ids recorded at start and read now, so a
# run that was killed is cleaned up too.
node_down() {
    [ -d "$SMOKE" ] || return 0
    record_jail_namespaces "$SMOKE" /run/slurm-jail/ns
    kill_namespace_members "$SMOKE"
    if [ -f "$SMOKE/made-var-lib-slurm-jail" ]; then rm -rf /var/lib/slurm-jail; fi
    rm -rf "$SMOKE"
    remove_smoke_user
}

# The test users and group go with the node.
remove_smoke_user() { as_smoke_user remove_user_from_host; }
