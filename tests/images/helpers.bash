# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034 # variables used by the .bats files
# Shared helpers for tests/images/*.bats.
load /usr/lib/bats/bats-support/load
load /usr/lib/bats/bats-assert/load

root=${SLURM_JAIL_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
images=$root/images
populate=$images/populate_jail/populate-jail
# shellcheck source=../../images/lib/podman-env.sh
. "$images/lib/podman-env.sh"

# note and elapsed_since: the measurements printed as TAP comments.
# shellcheck source=../lib/elapsed.bash
. "$root/tests/lib/elapsed.bash"

# assert_man_clean PAGE: man renders the page file PAGE (into $output) and
# groff warns of nothing: its warnings go to stderr, read apart, since a
# page's own words may well say "warning".
assert_man_clean() {
    local err=$BATS_TEST_TMPDIR/man.err
    run bash -c 'man -l --warnings -P cat "$1" 2>"$2"' man "$1" "$err"
    assert_success
    [ ! -s "$err" ] || fail "man --warnings -l $1: $(cat "$err")"
}

# make_jail_rootfs DIR VERSION: a real ~180 MB Debian minbase root filesystem
# (cached tarball from images/build-base), finalized as a jail.
make_jail_rootfs() {
    local dir=$1 version=$2 tar
    tar=$("$images/build-base" --tar-only | tail -1)
    mkdir -p "$dir"
    tar -C "$dir" -xf "$tar"
    chroot "$dir" /bin/sh -s "$version" <"$images/jail/finalize-rootfs"
}

# trim_jail_rootfs DIR: the jail without its documentation, translations,
# manual pages and time zones, about half of its files. For targets on a
# network filesystem (tests/shared-fs), where every file is a round trip to
# the server: populate-jail meets the same kinds of files there, fewer of them.
trim_jail_rootfs() { rm -rf "$1"/usr/share/{doc,locale,man,info,zoneinfo}; }

# Lines that differ between a jail source and a populated target (empty when
# the target is a complete copy). User data and populate state are left out.
jail_diff() {
    local src=$1 dst=$2
    shift 2
    rsync -aHAXS --numeric-ids --checksum --delete --dry-run --itemize-changes \
        --exclude=/.slurm-jail --exclude=/home "$@" "$src/" "$dst/" | grep -v '^\.d.* \./$' || true
}
