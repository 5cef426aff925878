#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # $images, $populate, ... come from helpers.bash
# populate-jail --generations (docs/jail-generations.md) against a real
# Debian jail root filesystem (trimmed: the same kinds of files, half of
# them), on the host: each version of the jail's system files is a
# generation beside the live one, made live by renaming one file; the users'
# data is one tree on the volume that no build, upgrade or rollback touches.
# chroot.so's side (steps enter the live one, a job keeps its own) is in
# tests/unit/jail_generation_root_test.cpp.

load helpers

setup_file() {
    export SRC=$BATS_FILE_TMPDIR/jail-1.0
    make_jail_rootfs "$SRC" 1.0
    trim_jail_rootfs "$SRC"
    mkdir -p "$SRC/home/testuser"
    echo 'image profile' >"$SRC/home/testuser/.profile"
    # Jail 2.0: one "package" more (a library and the program that uses it)
    # and one program changed; everything else as in 1.0.
    export V2=$BATS_FILE_TMPDIR/jail-2.0
    cp -a "$SRC" "$V2"
    chroot "$V2" /bin/sh -s 2.0 <"$images/jail/finalize-rootfs"
    head -c $((8 << 20)) /dev/urandom >"$V2/usr/lib/libnewpkg.so.1"
    echo 'new tool' >"$V2/usr/local/bin/new-tool"
    # A new file, never a write through the old one: it is a link to
    # /etc/alternatives/which, which would resolve on this machine.
    rm -f "$V2/usr/bin/which"
    echo 'changed' >"$V2/usr/bin/which"
}

setup() {
    T=$BATS_TEST_TMPDIR/volume
    GENS=$T/.slurm-jail/generations
}

# path, size, mode, owner, mtime and sha256 of every file under DIR
manifest() {
    (cd "$1" && find . -printf '%p %s %m %U:%G %T@ %i\n' | LC_ALL=C sort &&
        find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}

live() { sed -n "s/^$1=//p" "$T/.slurm-jail/live"; }

@test "populate-jail --generations: the first population is generation 1, made live last" {
    run "$populate" --source "$SRC" --target "$T" --generations --preserve /srv/data
    assert_success
    assert_output --partial 'first population: building generation 1'
    assert_output --partial 'generation 1 of'
    # (/srv's time aside: the mount point of /srv/data was made in it)
    assert_equal "$(jail_diff "$SRC" "$GENS/1" --exclude=/srv)" ''
    assert_equal "$(live generation)" 1
    assert_equal "$(live previous)" ''
    assert_equal "$(live data | tr '\n' ' ')" '/home /srv/data '
    # Modes chroot.so requires all the way down to the generation.
    assert_equal "$(stat -c '%u:%g %a' "$T" "$T/.slurm-jail" "$GENS" "$GENS/1" "$T/.slurm-jail/live" | tr '\n' ' ')" \
        '0:0 755 0:0 700 0:0 700 0:0 755 0:0 644 '
    # The users' data is on the volume, seeded from the image; the
    # generation has an empty directory there for chroot.so to bind onto.
    assert_equal "$(cat "$T/home/testuser/.profile")" 'image profile'
    assert_equal "$(ls -A "$GENS/1/home")" ''
    assert_equal "$(stat -c '%u:%g %a' "$GENS/1/srv/data" "$T/srv/data" | tr '\n' ' ')" '0:0 755 0:0 755 '
    assert_output --partial 'made the data path /srv/data, empty'
    # Nothing of the system files at the volume's top level, but the live
    # generation's user databases for the daemons outside the jail.
    assert_equal "$(find "$T" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' ')" '.slurm-jail etc home srv '
    assert_equal "$(find "$T/etc" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')" 'group passwd shadow '
    run "$populate" --source "$SRC" --target "$T" --preserve /srv/data
    assert_success
    assert_output --partial 'up to date: generation 1'
}

@test "populate-jail --generations: an upgrade builds beside the live generation, sharing what did not change" {
    "$populate" --source "$SRC" --target "$T" --generations
    echo 'my own profile' >"$T/home/testuser/.profile"
    local one home start upgrade
    one=$(manifest "$GENS/1")
    home=$(manifest "$T/home")

    run "$populate" --source "$V2" --target "$T" --dry-run
    assert_success
    assert_output --partial 'upgrade: would build generation 2 beside the live generation 1'
    assert_output --partial 'usr/lib/libnewpkg.so.1'
    assert_output --partial 'usr/bin/which'
    refute_output --partial 'usr/bin/perl'
    [ ! -e "$GENS/2" ] && [ ! -e "$GENS/2.building" ]

    start=$EPOCHREALTIME
    run "$populate" --source "$V2" --target "$T"
    upgrade=$(elapsed_since "$start")
    assert_success
    assert_output --partial 'upgrade: building generation 2 beside the live generation 1'
    assert_equal "$(live generation)" 2
    assert_equal "$(live previous)" 1
    assert_equal "$(jail_diff "$V2" "$GENS/2")" ''
    # The live generation was never written, the users' data never touched.
    assert_equal "$(manifest "$GENS/1")" "$one"
    assert_equal "$(manifest "$T/home")" "$home"
    # An unchanged file is one file in both; a changed one is not.
    assert_equal "$(stat -c %i "$GENS/2/usr/bin/perl")" "$(stat -c %i "$GENS/1/usr/bin/perl")"
    [ "$(stat -c %i "$GENS/2/usr/bin/which")" != "$(stat -c %i "$GENS/1/usr/bin/which")" ]
    # So generation 2 costs about its new files (8 MiB), not a jail.
    local whole added
    whole=$(du -sk "$GENS/1" | cut -f1)
    added=$(du -sk "$GENS/1" "$GENS/2" | sed -n 2p | cut -f1)
    [ "$added" -lt $((8 * 1024 + 2048)) ] || fail "generation 2 takes $added KiB beside generation 1 ($whole KiB)"
    note "one-package upgrade on a host dir: ${upgrade} s, ${added} KiB beside a ${whole} KiB generation"
}

@test "populate-jail --rollback: the previous generation is live again, a second rollback undoes it, the data stays" {
    "$populate" --source "$SRC" --target "$T" --generations
    "$populate" --source "$V2" --target "$T"
    echo 'written between' >"$T/home/testuser/notes"
    local home
    home=$(manifest "$T/home")
    run "$populate" --rollback --target "$T" --dry-run
    assert_success
    assert_output --partial 'would make generation 1 live again'
    assert_equal "$(live generation)" 2

    run "$populate" --rollback --target "$T"
    assert_success
    assert_output --partial 'generation 1 of'
    assert_output --partial 'live again, version 1.0'
    assert_equal "$(live generation)" 1
    assert_equal "$(live previous)" 2
    assert_equal "$(live data)" /home
    run "$populate" --rollback --target "$T"
    assert_success
    assert_equal "$(live generation)" 2
    assert_equal "$(manifest "$T/home")" "$home"

    # Back to 1.0, then its source again: the generation built from it is
    # made live as it is, without a build.
    "$populate" --rollback --target "$T"
    run "$populate" --source "$V2" --target "$T"
    assert_success
    assert_output --partial 'generation 2 of'
    assert_output --partial 'already holds version 2.0: live again'
    assert_equal "$(live generation)" 2
    [ ! -e "$GENS/3" ]
}

@test "populate-jail --generations: a build killed mid-copy leaves the live generation live; the next run builds again" {
    "$populate" --source "$SRC" --target "$T" --generations
    local one
    one=$(manifest "$GENS/1")
    setsid "$populate" --source "$V2" --target "$T" >"$BATS_TEST_TMPDIR/killed.log" 2>&1 3>&- &
    local pid=$!
    for _ in $(seq 1 4000); do
        [ -e "$GENS/2.building/etc" ] && break
        sleep 0.005
    done
    kill -KILL -- "-$pid"
    wait "$pid" || true
    [ -d "$GENS/2.building" ] || fail "the build was not under way when killed: $(cat "$BATS_TEST_TMPDIR/killed.log")"
    assert_equal "$(live generation)" 1
    assert_equal "$(manifest "$GENS/1")" "$one"

    run "$populate" --source "$V2" --target "$T"
    assert_success
    assert_equal "$(live generation)" 2
    [ ! -e "$GENS/2.building" ]
    assert_equal "$(jail_diff "$V2" "$GENS/2")" ''
}

@test "populate-jail --generations: a full volume stops the build before the switch, with the cause" {
    local big=$BATS_TEST_TMPDIR/big size
    cp -al "$V2" "$big"
    head -c $((48 << 20)) /dev/urandom >"$big/usr/lib/libhuge.so"
    size=$(($(du -sm "$SRC" | cut -f1) + 24))
    mkdir -p "$T"
    # shellcheck disable=SC2016 # expanded by the inner bash
    run unshare --mount --propagation private bash -uc '
        mount -t tmpfs -o "size=$4m,mode=0755" jail-volume "$2" || exit 9
        "$1" --source "$3" --target "$2" --generations >/dev/null || exit 9
        listing() { find "$2/.slurm-jail/generations/1" -printf "%p %s %i\n" | sort | sha256sum; }
        before=$(listing)
        "$1" --source "$5" --target "$2"
        echo "status $?"
        echo "live $(sed -n "s/^generation=//p" "$2/.slurm-jail/live")"
        echo "generations: $(ls "$2/.slurm-jail/generations" | tr "\n" " ")"
        [ "$before" = "$(listing)" ] && echo "generation 1 unchanged"
    ' _ "$populate" "$T" "$SRC" "$size" "$big"
    assert_line 'status 1'
    assert_output --partial "the volume $T is full: building generation 2 stopped"
    assert_output --partial 'The live generation is unchanged'
    assert_output --partial 'free space on the volume and run again'
    assert_line 'live 1'
    assert_line 'generations: 1 1.source '
    assert_line 'generation 1 unchanged'
}

@test "populate-jail --generations: a single-directory jail is migrated in place, its files shared as hard links" {
    "$populate" --source "$SRC" --target "$T"
    echo 'thesis' >"$T/home/testuser/thesis.tex"
    local before home
    before=$(manifest "$T")
    home=$(manifest "$T/home")
    run "$populate" --source "$SRC" --target "$T" --generations --dry-run
    assert_success
    assert_output --partial 'migrate: the single-directory jail'
    assert_equal "$(manifest "$T")" "$before"

    run "$populate" --source "$SRC" --target "$T" --generations
    assert_success
    assert_output --partial 'migrate: the single-directory jail becomes generation 1'
    assert_equal "$(live generation)" 1
    assert_equal "$(jail_diff "$SRC" "$GENS/1")" ''
    # No copy: the generation's files are the jail's own.
    assert_equal "$(stat -c %i "$GENS/1/usr/bin/perl")" "$(stat -c %i "$T/usr/bin/perl")"
    assert_equal "$(manifest "$T/home")" "$home"
    # Running jobs see the single-directory jail until they end.
    assert_equal "$(cat "$T/etc/slurm-jail-release")" "$(cat "$SRC/etc/slurm-jail-release")"
    # From now on every run works with generations, --generations or not.
    run "$populate" --source "$V2" --target "$T"
    assert_success
    assert_equal "$(live generation)" 2
}

@test "populate-jail --generations, --rollback: bad input is refused with the cause and the fix" {
    run "$populate" --rollback --source "$SRC" --target "$T"
    assert_failure 2
    assert_output --partial '--rollback takes no --source'
    run "$populate" --source "$SRC" --target "$T" --generations --preserve /usr/local/share/data
    assert_failure 1
    assert_output --partial "root on the nodes reads usr/local/share/data"
    run "$populate" --source "$SRC" --target "$T" --generations --preserve /srv --preserve /srv/data
    assert_failure 1
    assert_output --partial "lies below '/srv'"
    [ ! -e "$T/.slurm-jail/live" ]

    "$populate" --source "$SRC" --target "$T" >/dev/null
    run "$populate" --rollback --target "$T"
    assert_failure 1
    assert_output --partial 'has no generations'
    run "$populate" --source "$SRC" --target "$T" --generations
    assert_success
    run "$populate" --rollback --target "$T"
    assert_failure 1
    assert_output --partial 'names no previous generation (generation 1 is the first)'
}

@test "populate-jail --generations, hostile: a link planted above a data path is never followed to make it" {
    "$populate" --source "$SRC" --target "$T" --generations
    # An admin left /srv open to users; one of them plants a link there.
    local outside=$BATS_TEST_TMPDIR/outside
    mkdir -p "$T/srv" "$outside"
    chmod 1777 "$T/srv"
    ln -s "$outside" "$T/srv/data"
    run "$populate" --source "$SRC" --target "$T" --preserve /srv/data/shared
    assert_failure 1
    assert_output --partial "cannot make /srv/data/shared in $T: /srv is not a directory owned by root and closed to group and others"
    assert_equal "$(find "$outside" -mindepth 1 | wc -l)" 0
    assert_equal "$(live generation)" 1
}

# record NODE N...: NODE's record of the generations it holds, as chroot.so
# writes it (lib/sjail/core/node/generation_holds.hpp).
record() {
    local node=$1
    shift
    install -d -m 0700 "$T/.slurm-jail/nodes"
    { echo '# slurm-jail: the generations this node holds (written by chroot.so; do not edit)'
      printf 'generation=%s\n' "$@"; } >"$T/.slurm-jail/nodes/$node"
}

@test "populate-jail --holders, --prune: a generation is deleted only when no node holds it" {
    "$populate" --source "$SRC" --target "$T" --generations
    "$populate" --source "$V2" --target "$T"
    local v3=$BATS_TEST_TMPDIR/jail-3
    cp -a "$V2" "$v3"
    echo 'third' >"$v3/usr/local/bin/third-tool"
    "$populate" --source "$v3" --target "$T"
    run "$populate" --holders --target "$T"
    assert_success
    assert_output --partial 'no node has recorded what it holds yet'
    # node-a's namespace is on 3, a job of its still on 1; node-b is on 3.
    record node-a 1 3
    record node-b 3
    run "$populate" --holders --target "$T"
    assert_success
    assert_line --regexp '^generation 1: version 1\.0; held by node-a \(recorded [0-9-]+ [0-9:]+\)$'
    assert_line 'generation 2 (previous): version 2.0; held by no node'
    assert_line --regexp '^generation 3 \(live\): version 2\.0; held by node-a \(.*\), node-b \(.*\)$'
    run "$populate" --prune --target "$T"
    assert_success
    assert_output --partial 'kept generation 1: held by node-a'
    assert_output --partial '0 generation(s) deleted, 1 kept'
    [ -d "$GENS/1" ] && [ -d "$GENS/2" ] && [ -d "$GENS/3" ]

    # 1.0 live again (built before: no build), 2 its previous; 3, the
    # newest, is kept though no node holds it: its number was live.
    "$populate" --rollback --target "$T" >/dev/null
    "$populate" --source "$SRC" --target "$T" >/dev/null
    assert_equal "$(live generation) $(live previous)" '1 2'
    record node-a 1
    record node-b 1
    run "$populate" --prune --target "$T"
    assert_success
    assert_output --partial '0 generation(s) deleted, 0 kept'
    [ -d "$GENS/3" ]

    # 3 live again: 2 is neither live, previous nor newest, and nobody's.
    "$populate" --source "$v3" --target "$T" >/dev/null
    assert_equal "$(live generation) $(live previous)" '3 1'
    run "$populate" --prune --target "$T" --dry-run
    assert_success
    assert_output --partial 'dry run: would delete generation 2 (version 2.0'
    [ -d "$GENS/2" ]
    run "$populate" --prune --target "$T"
    assert_success
    assert_output --partial 'deleted generation 2'
    [ ! -e "$GENS/2" ] && [ ! -e "$GENS/2.source" ]
    # What generation 3 shared with 2 (hard links) is whole.
    assert_equal "$(jail_diff "$v3" "$GENS/3")" ''
    assert_equal "$(live generation)" 3
}

@test "populate-jail --forget-node: only a recorded node, named plainly" {
    "$populate" --source "$SRC" --target "$T" --generations
    record gone-node 1
    run "$populate" --forget-node ../live --target "$T"
    assert_failure 2
    assert_output --partial "a node's record is named by its host name"
    run "$populate" --forget-node other --target "$T"
    assert_failure 1
    assert_output --partial "no node named 'other' has a record"
    run "$populate" --forget-node gone-node --target "$T"
    assert_success
    [ ! -e "$T/.slurm-jail/nodes/gone-node" ]
    run "$populate" --prune --rollback --target "$T"
    assert_failure 2
    assert_output --partial '--prune and --rollback cannot be combined'
}

@test "the worker and login entrypoints take a volume with generations for a populated jail" {
    run bash -c '. "$1"; jail=$2 wait_timeout=1; wait_for_jail' _ "$images/lib/entrypoint-lib.sh" "$T"
    assert_failure 1
    assert_output --partial "no populated jail at $T/.slurm-jail/populated or $T/.slurm-jail/live after 1 s; mount the jail volume"
    "$populate" --source "$SRC" --target "$T" --generations >/dev/null
    [ ! -e "$T/.slurm-jail/populated" ]
    run bash -c '. "$1"; jail=$2 wait_timeout=1; wait_for_jail' _ "$images/lib/entrypoint-lib.sh" "$T"
    assert_success
}

@test "populate-jail --generations: the live generation's user databases are at TARGET/etc, for the daemons outside the jail" {
    "$populate" --source "$SRC" --target "$T" --generations >/dev/null
    local db
    for db in passwd group shadow; do
        cmp "$GENS/1/etc/$db" "$T/etc/$db" || fail "$T/etc/$db is not generation 1's"
    done
    # A user added in the next version of the image (a new file: the
    # others are hard links to 1.0's).
    local v=$BATS_TEST_TMPDIR/jail-users
    cp -al "$SRC" "$v"
    rm "$v/etc/passwd"
    { cat "$SRC/etc/passwd"; echo 'newuser:x:4242:4242::/home/newuser:/bin/bash'; } >"$v/etc/passwd"
    "$populate" --source "$v" --target "$T" >/dev/null
    run grep -c '^newuser:' "$T/etc/passwd"
    assert_output 1
    assert_equal "$(stat -c '%u %a' "$T/etc" "$T/etc/passwd" | tr '\n' ' ')" '0 755 0 644 '
    "$populate" --rollback --target "$T" >/dev/null
    run grep -c '^newuser:' "$T/etc/passwd"
    assert_output 0
    # A link planted where the databases go is refused, nothing written.
    rm -rf "${T:?}/etc"
    mkdir "$BATS_TEST_TMPDIR/elsewhere"
    ln -s "$BATS_TEST_TMPDIR/elsewhere" "$T/etc"
    run "$populate" --rollback --target "$T"
    assert_failure 1
    assert_output --partial "cannot make /etc/passwd in $T: /etc is not a directory owned by root"
    assert_equal "$(find "$BATS_TEST_TMPDIR/elsewhere" -mindepth 1 | wc -l)" 0
    assert_equal "$(live generation)" 1
}

@test "populate-jail --check-line: slurm-jail-check finds a new problem in the new generation; it is never made live" {
    local check_dir=${SLURM_JAIL_BUILD_DIR:-$root/build}/plugin/jail_check
    [ -x "$check_dir/slurm-jail-check" ] || fail "no slurm-jail-check in $check_dir: build the tree first"
    "$populate" --source "$SRC" --target "$T" --generations >/dev/null
    local line="required chroot.so jail=$T"
    run env PATH="$PATH:$check_dir" "$populate" --source "$V2" --target "$T" --check-line "$line"
    assert_success
    assert_output --partial 'checked generation 2 with slurm-jail-check: no problem the live generation 1 does not have'
    assert_equal "$(live generation)" 2
    # The next version has an /etc its group may write: root on the nodes
    # reads /etc from the jail.
    local bad=$BATS_TEST_TMPDIR/jail-bad
    cp -al "$V2" "$bad"
    echo bad >"$bad/usr/local/bin/bad-tool"
    chmod g+w "$bad/etc"
    run env PATH="$PATH:$check_dir" "$populate" --source "$bad" --target "$T" --check-line "$line"
    assert_failure 1
    assert_output --partial 'slurm-jail-check finds in generation 3 what the live generation 2 does not have'
    assert_output --partial 'JAIL/etc'
    assert_equal "$(live generation)" 2
    [ ! -e "$GENS/3" ] && [ ! -e "$GENS/3.building" ]
    # Without slurm-jail-check, or with a line that is not chroot.so's.
    run env PATH=/usr/bin:/bin "$populate" --source "$V2" --target "$T" --check-line "$line"
    assert_failure 1
    assert_output --partial '--check-line needs slurm-jail-check, which is not installed here'
    run env PATH="$PATH:$check_dir" "$populate" --source "$V2" --target "$T" --check-line 'required chroot.so'
    assert_failure 2
    assert_output --partial "not a chroot.so line with jail="
}
