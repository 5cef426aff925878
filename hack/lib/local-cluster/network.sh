# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The cluster network: a bridge and one network namespace per host name.
# Namespaces are kept as nsfs bind mounts under $LC_STATE/netns (not
# /run/netns), so `down` can remove every trace of them. The host has no
# address on the bridge: traffic stays between the cluster's namespaces.

netns_file() { echo "$LC_STATE/netns/$1"; }
veth_name() { echo "$LC_BRIDGE-$1"; }
bridge_marker() { echo "$LC_STATE/bridge"; }

subnet_in_use_elsewhere() {
    ip -o -4 addr show | grep -v " $LC_BRIDGE " | grep -q " inet $LC_SUBNET\."
}

ensure_bridge() {
    local longest
    longest=$(veth_name "node$(workers)")
    [ ${#longest} -le 15 ] ||
        die "bridge name '$LC_BRIDGE' is too long for interface names like $longest (15 chars max); set a shorter SLURM_JAIL_LOCAL_BRIDGE"
    if ip link show "$LC_BRIDGE" >/dev/null 2>&1; then
        [ "$(cat "$(bridge_marker)" 2>/dev/null)" = "$LC_BRIDGE" ] ||
            die "bridge $LC_BRIDGE exists but this cluster ($LC_STATE) did not make it; another cluster uses it. Set SLURM_JAIL_LOCAL_BRIDGE to another name"
    else
        if subnet_in_use_elsewhere; then
            die "subnet $LC_SUBNET.0/24 is already used on this host; pick another with SLURM_JAIL_LOCAL_SUBNET=10.x.y"
        fi
        ip link add "$LC_BRIDGE" type bridge
        echo "$LC_BRIDGE" >"$(bridge_marker)"
    fi
    ip link set "$LC_BRIDGE" up
}

# ensure_netns NAME ADDR: a network namespace with eth0=ADDR on the bridge.
ensure_netns() {
    local name=$1 addr=$2 file veth
    file=$(netns_file "$name")
    veth=$(veth_name "$name")
    if mountpoint -q "$file" 2>/dev/null; then
        return 0
    fi
    install -d -m 0755 "$LC_STATE/netns"
    : >"$file"
    unshare --net="$file" true
    # Made from inside, with the peer sent to this script's (the host's) netns.
    nsenter --net="$file" ip link add eth0 type veth peer name "$veth" netns $$
    ip link set "$veth" master "$LC_BRIDGE" up
    nsenter --net="$file" ip link set lo up
    nsenter --net="$file" ip addr add "$addr/24" dev eth0
    nsenter --net="$file" ip link set eth0 up
}

remove_netns() {
    local file
    file=$(netns_file "$1")
    ip link del "$(veth_name "$1")" 2>/dev/null || true
    if mountpoint -q "$file" 2>/dev/null; then umount "$file"; fi
    rm -f "$file"
}

remove_network() {
    local f
    for f in "$LC_STATE"/netns/*; do
        [ -e "$f" ] || continue
        remove_netns "$(basename "$f")"
    done
    # Only the bridge this cluster made.
    if [ "$(cat "$(bridge_marker)" 2>/dev/null)" = "$LC_BRIDGE" ]; then
        ip link del "$LC_BRIDGE" 2>/dev/null || true
        rm -f "$(bridge_marker)"
    fi
}
