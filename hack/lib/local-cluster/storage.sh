# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The jail on a shared filesystem (up --jail-fs glusterfs), as a site has it:
# a storage host, with a network and mount namespace of its own, runs
# glusterd and one brick; the volume is mounted over FUSE by a client of
# each host's own (every node, the login host; ns-init) and by one on this
# machine at the jail directory, where populate-jail and the tests write.
# GlusterFS over FUSE is what virtiofs (Kubernetes) and NFS sites are
# closest to: a network round trip per uncached lookup, attributes cached for
# a second, root not squashed, POSIX owners and modes.

# shellcheck source=hack/lib/mmdebstrap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../mmdebstrap.sh" # without_inherited_fds

storage_dir() { echo "$LC_STATE/storage"; }
storage_log() { echo "$LC_STATE/logs/storage.log"; }
storage_pid() { live_pid "$(storage_dir)/glusterd.pid"; }

# gluster ARGS...: the gluster CLI next to glusterd (its mount and network
# namespace), without questions.
gluster_cli() {
    local pid
    pid=$(storage_pid) || die "the storage host is not running; start the cluster: $0 up --jail-fs glusterfs"
    nsenter -t "$pid" -m -n -- gluster --mode=script "$@"
}

# start_storage: glusterd and the volume's brick on the storage host, the
# volume created once (its state stays in the storage directory) and
# started, with GlusterFS's per-brick operation counters on.
start_storage() {
    local dir
    dir=$(storage_dir)
    install -d -m 0700 "$dir" "$dir/glusterd" "$dir/log" "$dir/run"
    install -d -m 0755 "$dir/brick"
    install -d -m 0755 "$LC_STATE/logs"
    ensure_netns store "$(storage_addr)"
    if ! storage_pid >/dev/null; then
        nsenter --net="$(netns_file store)" -- unshare --mount --uts --propagation private -- \
            "$LC_LIB/storage-init" "$dir" </dev/null >>"$(storage_log)" 2>&1 8>&- ||
            die "glusterd did not start on the storage host; see $(storage_log) and $dir/log"
    fi
    poll_until 20 0.2 gluster_answers ||
        die "glusterd on the storage host does not answer; see $dir/log/glusterd.log"
    if ! gluster_cli volume info "$LC_VOLUME" >/dev/null 2>&1; then
        # force: the brick is on this machine's root filesystem.
        gluster_cli volume create "$LC_VOLUME" "$(storage_addr):$dir/brick" force >&2 ||
            die "creating the GlusterFS volume failed; see $dir/log"
        # A server that stops answering fails requests after 10 s, not 42.
        gluster_cli volume set "$LC_VOLUME" network.ping-timeout "$LC_STORAGE_PING_TIMEOUT" >&2
    fi
    gluster_cli volume start "$LC_VOLUME" force >&2 ||
        die "starting the GlusterFS volume failed; see $dir/log"
    gluster_cli volume profile "$LC_VOLUME" start >/dev/null 2>&1 || true
}

gluster_answers() { gluster_cli volume list >/dev/null 2>&1; }

# mount_shared_jail DIR LOG [RUN...]: the volume mounted at DIR by a FUSE
# client of its own, logging to LOG, started through RUN (nsenter --net=...
# on this machine; nothing inside a host's namespaces, ns-init). The client
# daemon keeps none of the caller's descriptors: one held by a test
# harness's pipe would hold the harness until the client ends.
mount_shared_jail() {
    local dir=$1 log=$2 i
    shift 2
    # --acl: POSIX ACLs, which populate-jail carries over from the image.
    without_inherited_fds "$@" glusterfs --volfile-server="$(storage_addr)" --volfile-id="$LC_VOLUME" \
        --acl --log-file="$log" "$dir" </dev/null ||
        die "mounting the jail's GlusterFS volume at $dir failed; see $log"
    for ((i = 0; i < 100; i++)); do
        is_fuse_mount "$dir" && return 0
        sleep 0.1
    done
    die "the jail's GlusterFS volume did not appear at $dir; see $log"
}

is_fuse_mount() { [ "$(stat -f -c %T "$1" 2>/dev/null)" = fuseblk ]; }

# mount_jail_here: the jail directory of this machine, on the volume, its
# client in the storage host's network.
mount_jail_here() {
    local jail=$LC_STATE/jail
    install -d -m 0755 "$jail"
    is_fuse_mount "$jail" && return 0
    mount_shared_jail "$jail" "$LC_STATE/logs/glusterfs-here.log" nsenter --net="$(netns_file store)" --
}

# login_jail: where the login host's client mounts the volume. Each login
# (local-cluster run, an sshd) is a namespace of its own that lives only as
# long as it runs; ns-init binds this mount there.
login_jail() { echo "$LC_STATE/login/jail"; }

# mount_login_jail: the login host's own client of the volume, in its network,
# kept for as long as the cluster is up.
mount_login_jail() {
    install -d -m 0755 "$(login_jail)"
    is_fuse_mount "$(login_jail)" && return 0
    mount_shared_jail "$(login_jail)" "$LC_STATE/logs/glusterfs-login.log" \
        nsenter --net="$(netns_file login)" --
}

# The volume's clients of this cluster, by the log file each was given: one
# whose network namespace went before it (and so out of cluster_pids' reach)
# is still found.
client_pids() { pgrep -f -- "^glusterfs .*--log-file=$LC_STATE/logs/glusterfs-" || true; }

# unmount_jail_here: this machine's mounts of the volume (their clients end
# with the cluster's networks).
unmount_jail_here() {
    local dir
    for dir in "$LC_STATE/jail" "$(login_jail)"; do
        while findmnt -rn -o TARGET | grep -qxF "$dir"; do
            umount -l "$dir" || break
        done
    done
}

# storage_counts: what the brick served since the last call, as GlusterFS
# counts it (volume profile ... info incremental): one "FOP COUNT" line per
# operation.
storage_counts() {
    gluster_cli volume profile "$LC_VOLUME" info incremental |
        awk '/Interval [0-9]+ Stats/ { on = 1 } on && NF >= 9 && $NF ~ /^[A-Z]+$/ && $(NF-1) ~ /^[0-9]+$/ { print $NF, $(NF-1) }'
}
