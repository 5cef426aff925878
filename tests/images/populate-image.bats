#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # $images comes from helpers.bash
# The populate-jail image against a podman volume: first population, no-op
# re-run, and an upgrade to a changed jail image that keeps user data.

load helpers

setup_file() {
    "$images/build-images" >&3
    export VOL=sjtest-populate-$$ NEXT=localhost/sjtest-populate-next:$$
    podman volume create "$VOL" >/dev/null
}

teardown_file() {
    [ -z "${VOL:-}" ] || podman volume rm -f "$VOL" >/dev/null 2>&1 || true
    [ -z "${NEXT:-}" ] || podman rmi -f "$NEXT" >/dev/null 2>&1 || true
}

# in_volume IMAGE [ARGS...]: run IMAGE's populate-jail with the volume at /mnt/jail
in_volume() {
    local image=$1
    shift
    podman run --rm --network none -v "$VOL:/mnt/jail" "$image" "$@"
}

# vol_sh SCRIPT: a shell in the populate-jail image with the volume mounted
vol_sh() {
    podman run --rm --network none -v "$VOL:/mnt/jail" --entrypoint bash \
        localhost/slurm-jail/populate-jail:latest -euc "$1"
}

manifest_of() {
    vol_sh "cd /mnt/jail && find $* -printf '%p %s %m %U:%G %T@\n' | LC_ALL=C sort && find $* -type f -exec sha256sum {} + | LC_ALL=C sort"
}

@test "populate-jail image: first run fills a podman volume, a re-run is a fast no-op" {
    local start first noop
    start=$EPOCHREALTIME
    run in_volume localhost/slurm-jail/populate-jail:latest
    first=$(elapsed_since "$start")
    assert_success
    assert_output --partial 'first population: version'
    local own_first=${output##*done in }
    own_first=${own_first%% s:*}

    run vol_sh 'stat -c "%u:%g %a" /mnt/jail
        rsync -aHAXS --numeric-ids --checksum --delete -n -i --exclude=/.slurm-jail --exclude=/home \
            /jail-rootfs/ /mnt/jail/ | grep -v "^\.d.* \./$" || true
        stat -c "%u:%g %a" /mnt/jail/home/testuser
        du -sh /jail-rootfs | cut -f1
        stat -c "%u:%g %a" /jail-rootfs/home/testuser'
    assert_success
    assert_line --index 0 '0:0 755'
    # nothing differs in between; the home keeps the image's owner and mode
    # (useradd makes it 0755 on bookworm, 0700 from trixie on)
    assert_line --index 1 --regexp '^1000:1000 7[0-7][0-7]$'
    assert_equal "${lines[1]}" "${lines[3]}"
    local size=${lines[2]}

    start=$EPOCHREALTIME
    run in_volume localhost/slurm-jail/populate-jail:latest
    noop=$(elapsed_since "$start")
    assert_success
    assert_output --partial 'up to date'
    local own_noop=${output##*checked in }
    own_noop=${own_noop%% s)*}
    note "populate-jail image, $size jail into a podman volume: first run ${own_first} s, no-op re-run ${own_noop} s (populate-jail's own times); ${first} s and ${noop} s including podman run"
}

@test "populate-jail image: upgrade to a changed jail image keeps /home and preserved paths byte-identical" {
    run in_volume localhost/slurm-jail/populate-jail:latest
    assert_success
    local ctx=$BATS_TEST_TMPDIR/next
    mkdir -p "$ctx"
    cat >"$ctx/Containerfile" <<'EOF'
FROM localhost/slurm-jail/populate-jail:latest
RUN sed -i 's/^SLURM_JAIL_VERSION=.*/SLURM_JAIL_VERSION=next/' /jail-rootfs/etc/slurm-jail-release \
    && rm /jail-rootfs/usr/bin/wget \
    && echo 'new tool' >/jail-rootfs/usr/local/bin/new-tool \
    && echo 'image motd 2' >/jail-rootfs/etc/motd \
    && echo 'from image 2' >/jail-rootfs/home/testuser/.from-image
EOF
    podman build --pull=never --network=none -q -t "$NEXT" "$ctx" >/dev/null

    # users and the admin work in the jail
    vol_sh 'head -c 200000 /dev/urandom >/mnt/jail/home/testuser/results.bin
        echo "my notes" >/mnt/jail/home/testuser/notes.txt
        mkdir -p /mnt/jail/srv/site && echo "site config" >/mnt/jail/srv/site/config
        echo "admin motd" >/mnt/jail/etc/motd'
    local keep='home srv/site etc/motd' before
    before=$(manifest_of "$keep")

    run in_volume "$NEXT" --source /jail-rootfs --target /mnt/jail --preserve /srv/site --preserve /etc/motd --dry-run
    assert_success
    assert_output --partial 'upgrade: from version 0.1.0 to next'
    assert_output --partial '*deleting   usr/bin/wget'
    assert_output --partial 'usr/local/bin/new-tool'
    refute_output --partial 'srv/site'
    refute_output --partial 'etc/motd'
    run vol_sh 'cat /mnt/jail/etc/slurm-jail-release; test -e /mnt/jail/usr/bin/wget && echo wget-still-there'
    assert_line --index 0 SLURM_JAIL_VERSION=0.1.0
    assert_line --index 1 wget-still-there

    local start upgrade
    start=$EPOCHREALTIME
    run in_volume "$NEXT" --source /jail-rootfs --target /mnt/jail --preserve /srv/site --preserve /etc/motd
    upgrade=$(elapsed_since "$start")
    assert_success
    assert_output --partial 'upgrade: from version 0.1.0 to next'
    local own=${output##*done in }
    own=${own%% s:*}

    run vol_sh 'cat /mnt/jail/etc/slurm-jail-release /mnt/jail/usr/local/bin/new-tool
        test ! -e /mnt/jail/usr/bin/wget && echo wget-removed
        test ! -e /mnt/jail/home/testuser/.from-image && echo home-untouched
        head -1 /mnt/jail/.slurm-jail/populated'
    assert_success
    assert_output "SLURM_JAIL_VERSION=next
new tool
wget-removed
home-untouched
SLURM_JAIL_VERSION=next"
    assert_equal "$(manifest_of "$keep")" "$before"
    note "populate-jail image upgrade into a podman volume: ${own} s (populate-jail's own time); ${upgrade} s including podman run"
}
