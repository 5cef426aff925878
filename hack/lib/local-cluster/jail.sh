# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The shared jail: rootfs, populate, test user, plugin.

LC_POPULATE=$LC_ROOT/images/populate_jail/populate-jail

jail_dir() { echo "$LC_STATE/jail"; }

# jail_rootfs_args REL: hack/jail-rootfs's arguments (one per line) for the
# jail of a cluster on Slurm REL. MPICH's runtime, for MPI jobs across nodes
# through Slurm's PMI2 (srun --mpi=pmi2). This machine's release: libfmt9
# too, which slurm-jail-nccl-check (built on this machine) needs, as in the
# jail image; and Open MPI's runtime, for srun --mpi=pmix (link_pmix_library
# below). Another release: its suite, with its Slurm client.
jail_rootfs_args() {
    if [ "$1" = "$(host_release)" ]; then
        printf '%s\n' --include libfmt9 --include libmpich12 --include libopenmpi3
    else
        printf '%s\n' --include libmpich12 --slurm "$1"
    fi
}

# Slurm's PMIx plugin, which srun loads in the jail, opens libpmix.so, which
# only libpmix-dev installs: the images' slurm-pmix-library links it to the
# libpmix.so.2 the rootfs has (Open MPI's runtime brings it; Debian 13's
# Slurm depends on it; Debian's 26.05 has no such plugin).
link_pmix_library() {
    chroot "$LC_STATE/rootfs" /bin/sh -s <"$LC_ROOT/images/jail/slurm-pmix-library" >/dev/null ||
        die "images/jail/slurm-pmix-library failed in the jail's rootfs (see above)"
}

# Unpack the cached rootfs tarball once per tarball into $LC_STATE/rootfs.
unpack_rootfs() {
    local tarball=$1 dir=$LC_STATE/rootfs
    if [ "$(cat "$LC_STATE/rootfs.stamp" 2>/dev/null)" = "$tarball" ] && [ -d "$dir" ]; then
        return 0
    fi
    log "unpacking $tarball"
    rm -rf "$dir" "$LC_STATE/rootfs.stamp"
    install -d -m 0755 "$dir"
    tar -C "$dir" --numeric-owner -xpf "$tarball"
    echo "$tarball" >"$LC_STATE/rootfs.stamp"
}

# Fill the shared jail with the project's own populate logic (one code path).
populate_jail() {
    [ -x "$LC_POPULATE" ] ||
        die "$LC_POPULATE is missing; it fills the jail. Update your checkout (git pull)."
    install -d -m 0755 -o root -g root "$(jail_dir)"
    "$LC_POPULATE" --source "$LC_STATE/rootfs" --target "$(jail_dir)" >&2
}

# add_line FILE KEY LINE: append LINE unless an entry KEY: exists.
add_line() {
    grep -q "^$2:" "$1" || echo "$3" >>"$1"
}

# add_user_to_jail JAIL: the test users (LC_USER, LC_USER2) in the jail's
# passwd, group, shadow, subuid and subgid, with a home.
add_user_to_jail() {
    local j=$1
    add_line "$j/etc/group" "$LC_USER" "$LC_USER:x:$LC_UID:"
    add_line "$j/etc/group" "$LC_GROUP_EXTRA" "$LC_GROUP_EXTRA:x:$LC_GID_EXTRA:$LC_USER"
    add_line "$j/etc/passwd" "$LC_USER" \
        "$LC_USER:x:$LC_UID:$LC_UID:slurm-jail test user:/home/$LC_USER:/bin/bash"
    add_line "$j/etc/shadow" "$LC_USER" "$LC_USER:*:19000:0:99999:7:::"
    install -d -m 0755 -o "$LC_UID" -g "$LC_UID" "$j/home/$LC_USER"
    add_line "$j/etc/group" "$LC_USER2" "$LC_USER2:x:$LC_UID2:"
    add_line "$j/etc/passwd" "$LC_USER2" \
        "$LC_USER2:x:$LC_UID2:$LC_UID2:slurm-jail second test user:/home/$LC_USER2:/bin/bash"
    add_line "$j/etc/shadow" "$LC_USER2" "$LC_USER2:*:19000:0:99999:7:::"
    install -d -m 0755 -o "$LC_UID2" -g "$LC_UID2" "$j/home/$LC_USER2"
    # Subordinate ids, as useradd gives them: user namespaces with more than
    # the user's own id (rootless podman, through newuidmap/newgidmap).
    local f
    for f in subuid subgid; do
        add_line "$j/etc/$f" "$LC_USER" "$LC_USER:100000:65536"
        add_line "$j/etc/$f" "$LC_USER2" "$LC_USER2:165536:65536"
    done
}

# The same user, with the same ids, on the host (slurmd looks it up there).
add_user_to_host() {
    local uid gid
    getent group "$LC_USER" >/dev/null || groupadd -g "$LC_UID" "$LC_USER"
    getent group "$LC_GROUP_EXTRA" >/dev/null || groupadd -g "$LC_GID_EXTRA" "$LC_GROUP_EXTRA"
    getent passwd "$LC_USER" >/dev/null ||
        useradd -u "$LC_UID" -g "$LC_UID" -G "$LC_GROUP_EXTRA" -M -d "/home/$LC_USER" \
            -s /bin/bash -c "slurm-jail test user" "$LC_USER"
    getent group "$LC_USER2" >/dev/null || groupadd -g "$LC_UID2" "$LC_USER2"
    getent passwd "$LC_USER2" >/dev/null ||
        useradd -u "$LC_UID2" -g "$LC_UID2" -M -d "/home/$LC_USER2" \
            -s /bin/bash -c "slurm-jail second test user" "$LC_USER2"
    [ "$(id -u "$LC_USER2")" = "$LC_UID2" ] ||
        die "host user $LC_USER2 has uid $(id -u "$LC_USER2"), expected $LC_UID2; remove it (userdel $LC_USER2)"
    uid=$(id -u "$LC_USER") gid=$(getent group "$LC_GROUP_EXTRA" | cut -d: -f3)
    if [ "$uid" != "$LC_UID" ] || [ "$gid" != "$LC_GID_EXTRA" ]; then
        die "host user $LC_USER has uid $uid / group $LC_GROUP_EXTRA has gid $gid, expected $LC_UID / $LC_GID_EXTRA; remove them (userdel $LC_USER; groupdel $LC_GROUP_EXTRA)"
    fi
}

# Each user and group is removed on its own: one that fails is named and the
# others still go.
remove_user_from_host() {
    local u g
    for u in "$LC_USER" "$LC_USER2"; do remove_host_user "$u"; done
    for g in "$LC_GROUP_EXTRA" "$LC_USER" "$LC_USER2"; do
        getent group "$g" >/dev/null || continue
        groupdel "$g" || log "warning: could not remove the host group $g: groupdel $g"
    done
}

# remove_host_user NAME: userdel NAME. userdel refuses a user with a process
# (a job's process the daemons' stop has just signalled may still be
# ending): those are killed, and userdel tried again for up to 5 s.
remove_host_user() {
    local name=$1 uid tries=0
    uid=$(id -u "$name" 2>/dev/null) || return 0
    until userdel "$name" 2>/dev/null; do
        tries=$((tries + 1))
        if [ "$tries" -gt 10 ]; then
            log "warning: could not remove the host user $name: $(userdel "$name" 2>&1)"
            return 0
        fi
        pkill -KILL -U "$uid" 2>/dev/null || true
        sleep 0.5
    done
}

# Local clusters with the same test users (SLURM_JAIL_LOCAL_USERS) share
# them on the host: each cluster that is up is registered here (one file per
# state directory: the directory, then its users), and 'down' removes the
# users only when no other registered cluster with the same users is up.
LC_REGISTRY=${SLURM_JAIL_LOCAL_REGISTRY:-/run/slurm-jail-local-clusters}
registry_entry() { echo "$LC_REGISTRY/$(printf '%s' "$LC_STATE" | sha256sum | cut -c1-16)"; }

# with_registry_lock CMD...: CMD under the registry's lock (a subshell).
with_registry_lock() {
    install -d -m 0755 "$LC_REGISTRY"
    (
        flock -w 60 7 || die "another local-cluster has held $LC_REGISTRY/.lock for a minute"
        "$@"
    ) 7>"$LC_REGISTRY/.lock"
}

# The other local clusters with this cluster's users that are up, one line
# each: registered ones whose slurmctld or munged runs (entries of clusters
# that are down are dropped; an entry without users has the default ones),
# and any slurmctld started as ns-init starts it that no registered cluster
# owns (a cluster of an older local-cluster, which did not register).
# Called once this cluster's own slurmctld is stopped.
other_clusters_up() {
    local f dir users pid owned=" "
    for f in "$LC_REGISTRY"/*; do
        if [ ! -f "$f" ] || [ "$f" = "$(registry_entry)" ]; then continue; fi
        dir=$(sed -n 1p "$f") users=$(sed -n 2p "$f")
        if pid=$(live_pid "$dir/ctld/slurmctld.pid") || live_pid "$dir/munge/munged.pid" >/dev/null; then
            owned+="$pid "
            [ "${users:-$LC_USERS_DEFAULT}" != "$LC_USERS" ] || echo "the cluster in $dir"
        else
            rm -f "$f"
        fi
    done
    for pid in $(pgrep -f '^slurmctld -c -f /etc/slurm/slurm.conf$'); do
        [[ $owned == *" $pid "* ]] || echo "a cluster with slurmctld pid $pid"
    done
}

register_and_add_users() {
    printf '%s\n%s\n' "$LC_STATE" "$LC_USERS" >"$(registry_entry)"
    add_user_to_host
}

unregister_and_remove_users() {
    local others
    rm -f "$(registry_entry)"
    others=$(other_clusters_up)
    if [ -n "$others" ]; then
        log "keeping the host users $LC_USER and $LC_USER2: another local cluster with them is up ($(head -1 <<<"$others"))"
        return 0
    fi
    remove_user_from_host
}

# The job container plugin's file for the cluster's release: Slurm 25.11
# renamed the job_container plugin type to namespace.
job_container_name() {
    if release_at_least "$(cluster_release)" 25.11; then
        echo namespace_slurm_jail
    else
        echo job_container_slurm_jail
    fi
}

build_plugin() {
    local build=${SLURM_JAIL_BUILD_DIR:-$LC_ROOT/build} release jc type targets=(chroot)
    release=$(cluster_release)
    jc=$(job_container_name)
    # One target for both interfaces; its file is the release's plugin name.
    [ "$LC_JOB_CONTAINER" = yes ] && targets+=(job_container_slurm_jail)
    targets+=(pam_slurm_jail)
    if [ -n "$(release_rootfs)" ]; then
        # Against that release's headers, with its compiler, in its rootfs.
        # The build type the directory already has (tests/release-builds builds the
        # whole tree there), so that this build adds to it.
        type=$(tree_build_type "$build-$release")
        log "building the plugin for Slurm $release in $build-$release"
        build=$(SLURM_JAIL_BUILD_DIR=$build "$LC_ROOT/hack/build-release" "$release" "$type" -- \
            --target "${targets[@]}") ||
            die "building chroot.so for Slurm $release failed (see above)"
    else
        log "building the plugin in $build"
        cmake -S "$LC_ROOT" -B "$build" -DCMAKE_BUILD_TYPE="$(tree_build_type "$build")" \
            -DSLURM_JAIL_WERROR=ON >/dev/null ||
            die "cmake configure failed (see above); run hack/install-deps for the build tools"
        cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >&2 ||
            die "building chroot.so failed (see above)"
    fi
    LC_PLUGIN_SO=$build/plugin/chroot/chroot.so
    [ -f "$LC_PLUGIN_SO" ] || die "the build did not produce $LC_PLUGIN_SO"
    LC_PAM_SO=$build/plugin/pam/pam_slurm_jail.so
    [ -f "$LC_PAM_SO" ] || die "the build did not produce $LC_PAM_SO"
    LC_JOB_CONTAINER_SO=
    if [ "$LC_JOB_CONTAINER" = yes ]; then
        LC_JOB_CONTAINER_SO=$(find "$build/plugin" -name "$jc.so" | head -1)
        [ -n "$LC_JOB_CONTAINER_SO" ] || die "the build did not produce $jc.so below $build/plugin"
    fi
}

# Nodes and the controller see a copy of the release's PluginDir (this
# machine's, or the release rootfs's) plus chroot.so and the job container plugin (the host's
# own PluginDir is left alone); the jail gets chroot.so for srun inside jobs.
install_plugin() {
    local jc
    jc=$(job_container_name)
    install -d -m 0755 "$LC_STATE/plugins"
    rsync -a --delete --exclude=/chroot.so --exclude=/job_container_slurm_jail.so \
        --exclude=/namespace_slurm_jail.so --exclude=/spank_pyxis.so "$(release_rootfs)$LC_PLUGIN_DIR/" "$LC_STATE/plugins/"
    # Slurm's PMIx plugins without the PMIx library they load: slurmctld
    # logs errors for them on every start, and no job could use them.
    if [ ! -e "$(release_rootfs)/usr/lib/$LC_MULTIARCH/libpmix.so" ]; then
        rm -f "$LC_STATE"/plugins/mpi_pmix*.so
    fi
    replace_file "$LC_PLUGIN_SO" "$LC_STATE/plugins/chroot.so"
    if [ -n "${LC_JOB_CONTAINER_SO:-}" ]; then
        replace_file "$LC_JOB_CONTAINER_SO" "$LC_STATE/plugins/$jc.so"
    fi
    replace_file "$LC_PLUGIN_SO" "$(jail_dir)$LC_PLUGIN_DIR/chroot.so"
    install_pyxis_plugin
    install_su_stack
}

# Nodes run su through the worker image's PAM stack (bound over /etc/pam.d/su
# and su-l in their mount namespaces), with pam_slurm_jail.so from the build: slurmd's
# "su - USER" for sbatch --get-user-env enters the jail, as in the image.
install_su_stack() {
    install -d -m 0755 "$LC_STATE/pam"
    replace_file "$LC_PAM_SO" "$LC_STATE/pam/pam_slurm_jail.so"
    sed "s#^\(session *required *\)pam_slurm_jail.so#\1$LC_STATE/pam/pam_slurm_jail.so#" \
        "$LC_ROOT/images/worker/pam.d/su" >"$LC_STATE/pam/su.new"
    grep -q "$LC_STATE/pam/pam_slurm_jail.so" "$LC_STATE/pam/su.new" ||
        die "images/worker/pam.d/su has no 'session required pam_slurm_jail.so' line"
    chmod 0644 "$LC_STATE/pam/su.new"
    mv -f "$LC_STATE/pam/su.new" "$LC_STATE/pam/su"
}

# replace_file SRC DST: a new inode, renamed into place, so that running
# slurmstepds keep their mapped copy intact.
replace_file() {
    install -m 0755 "$1" "$2.new"
    mv -f "$2.new" "$2"
}
