# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# 'up --containers': the container runtimes in the jail, for containers in
# jobs (docs/containers.md). The jail gets what the jail image has: the
# packages of images/jail/containers/packages.txt (apt in a chroot of the
# jail, from this machine's Debian mirror, as an admin would install them
# into the shared jail) and its /etc/containers. Each node's /dev/fuse and
# /dev/net/tun are ones that every user may open (mode 0666), as udev makes
# them on a real node; ns-init binds them over the node's (this machine's
# may be 0600).

# shellcheck source=hack/lib/mmdebstrap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../mmdebstrap.sh" # without_inherited_fds

LC_CONTAINERS_DIR=$LC_ROOT/images/jail/containers

containers_on() { [ -f "$LC_STATE/containers" ]; }

# The packages of the list, one per line.
container_packages() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$LC_CONTAINERS_DIR/packages.txt"; }

# jail_has_packages JAIL PKG...: whether dpkg in JAIL has every PKG installed.
jail_has_packages() {
    local j=$1 status
    shift
    # shellcheck disable=SC2016 # dpkg-query's format, not the shell's
    status=$(chroot "$j" dpkg-query -W -f='${db:Status-Status}\n' "$@" 2>/dev/null) || return 1
    [ "$(grep -cx installed <<<"$status")" -eq $# ]
}

# apt_in_jail JAIL ARGS...: apt-get ARGS in a chroot of JAIL, with a /proc of
# its own in a mount namespace of its own (nothing stays mounted), and no
# inherited descriptor above 2 (hack/lib/mmdebstrap.sh says why).
apt_in_jail() {
    local j=$1
    shift
    # shellcheck disable=SC2016 # the inner shell's arguments
    without_inherited_fds unshare --mount --fork -- sh -c \
        'mount -t proc proc "$1/proc" && shift && exec chroot "$@"' \
        sh "$j" "$j" env DEBIAN_FRONTEND=noninteractive apt-get -q -o Acquire::Retries=5 "$@"
}

# install_into_jail PKG...: Debian packages in the jail, unless there already.
install_into_jail() {
    local j log=$LC_STATE/logs/jail-apt.log
    j=$(jail_dir)
    jail_has_packages "$j" "$@" && return 0
    log "installing into the jail: $*"
    install -d -m 0755 "$LC_STATE/logs"
    { apt_in_jail "$j" update && apt_in_jail "$j" install -y --no-install-recommends "$@"; } \
        >"$log" 2>&1 || {
        tail -n 20 "$log" >&2
        die "installing $* into the jail failed (above; whole log: $log); check this machine's Debian mirror and the package names"
    }
    apt_in_jail "$j" clean >/dev/null
    rm -rf "$j"/var/lib/apt/lists/*
}

install_container_runtimes() {
    local j packages=()
    j=$(jail_dir)
    mapfile -t packages < <(container_packages)
    install_into_jail "${packages[@]}"
    install -d -m 0755 "$j/etc/containers"
    install -m 0644 "$LC_CONTAINERS_DIR/containers.conf" "$LC_CONTAINERS_DIR/storage.conf" "$j/etc/containers/"
    # podman with containers/storage newer than 1.62 (Debian unstable's 5.8)
    # reads the users' store and root's from these drop-ins (see storage.conf)
    local d
    for d in storage.rootless.conf.d storage.rootful.conf.d; do
        install -d -m 0755 "$j/etc/containers/$d"
        install -m 0644 "$LC_CONTAINERS_DIR/$d/50-slurm-jail.conf" "$j/etc/containers/$d/"
    done
}
