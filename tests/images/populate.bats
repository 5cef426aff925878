#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # $images, $populate, ... come from helpers.bash
# populate-jail against a real ~180 MB Debian jail root filesystem, on the
# host (plain directory and a freshly mounted tmpfs volume). The same script
# runs inside the populate-jail image (populate-image.bats; tests/chart runs
# it as the chart's populate Job).

load helpers

setup_file() {
    export SRC=$BATS_FILE_TMPDIR/jail-1.0
    make_jail_rootfs "$SRC" 1.0
    if [ -n "${SLURM_JAIL_POPULATE_TARGETS:-}" ]; then trim_jail_rootfs "$SRC"; fi
    # What populate-jail must carry over exactly: a user's home from the
    # image, hard links, ACLs, xattrs, sparse files and numeric ids.
    mkdir -p "$SRC/home/testuser" "$SRC/srv/data"
    echo 'image profile' >"$SRC/home/testuser/.profile"
    echo 'image seed data' >"$SRC/srv/data/seed"
    echo acl >"$SRC/opt/acl-file"
    setfacl -m u:4242:rw "$SRC/opt/acl-file"
    setfattr -n user.slurmjail -v kept "$SRC/opt/acl-file"
    truncate -s 64M "$SRC/opt/sparse-file"
    echo owned >"$SRC/opt/numeric-owner"
    chown 4242:4343 "$SRC/opt/numeric-owner"
}

setup() {
    # SLURM_JAIL_POPULATE_TARGETS=DIR: the targets below DIR instead, e.g. on
    # a network filesystem (tests/shared-fs puts them on the GlusterFS volume),
    # from a trimmed jail (trim_jail_rootfs).
    if [ -n "${SLURM_JAIL_POPULATE_TARGETS:-}" ]; then
        T=$SLURM_JAIL_POPULATE_TARGETS/target-$BATS_TEST_NUMBER
        rm -rf "$T"
    else
        T=$BATS_TEST_TMPDIR/target
    fi
}

teardown() {
    if [ -n "${SLURM_JAIL_POPULATE_TARGETS:-}" ]; then rm -rf "$T"; fi
}

marker_of() { printf '%s\nSOURCE_HASH=' "$(cat "$1/etc/slurm-jail-release")"; }

# path, size, mode, owner, mtime and sha256 of every file under DIR
manifest() {
    (cd "$1" && find . -printf '%p %s %m %U:%G %T@\n' | LC_ALL=C sort &&
        find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}

@test "populate-jail: --help and man page" {
    run "$populate" --help
    assert_success
    assert_output --partial 'Usage: populate-jail --source DIR --target DIR [--preserve PATH]... [--generations]'
    assert_output --partial '[--check-line LINE] [--dry-run]'
    assert_output --partial 'populate-jail --rollback --target DIR [--dry-run]'
    assert_output --partial 'populate-jail --prune --target DIR [--dry-run]'
    assert_man_clean "$images/populate_jail/man/populate-jail.8"
    assert_output --partial 'populate-jail'
}

@test "populate-jail: bad input is refused with the cause and the fix" {
    mkdir -p "$BATS_TEST_TMPDIR/not-a-jail/etc"
    run "$populate" --source "$BATS_TEST_TMPDIR/not-a-jail" --target "$T"
    assert_failure 1
    assert_output --partial 'has no /etc/slurm-jail-release'
    assert_output --partial 'finalize-rootfs'

    mkdir -p "$BATS_TEST_TMPDIR/user-dir"
    echo precious >"$BATS_TEST_TMPDIR/user-dir/thesis.tex"
    run "$populate" --source "$SRC" --target "$BATS_TEST_TMPDIR/user-dir"
    assert_failure 1
    assert_output --partial 'is not empty and was not populated by populate-jail'
    assert_equal "$(cat "$BATS_TEST_TMPDIR/user-dir/thesis.tex")" precious
    assert_equal "$(ls -A "$BATS_TEST_TMPDIR/user-dir")" thesis.tex

    run "$populate" --source "$SRC" --target "$T" --preserve srv/data
    assert_failure 2
    assert_output --partial 'must be an absolute path'
    run "$populate" --source "$SRC" --target "$T" --preserve '/srv/*'
    assert_failure 2
    assert_output --partial 'wildcards are not supported'
    run "$populate" --source "$SRC"
    assert_failure 2
    assert_output --partial -- '--target DIR is required'
    run "$populate" --source "$SRC" --target "$SRC/sub"
    assert_failure 1
    assert_output --partial 'lies inside source'
}

@test "populate-jail: first run copies everything, re-run is a fast no-op" {
    local start first noop
    start=$EPOCHREALTIME
    run "$populate" --source "$SRC" --target "$T"
    first=$(elapsed_since "$start")
    assert_success
    assert_output --partial 'first population: version 1.0'

    assert_equal "$(jail_diff "$SRC" "$T")" ''
    assert_equal "$(stat -c '%u:%g %a' "$T")" '0:0 755'
    run cat "$T/.slurm-jail/populated"
    assert_output --regexp "^$(marker_of "$SRC")[0-9a-f]{64}$"
    [ ! -e "$T/.slurm-jail/in-progress" ]
    # /home is seeded from the image on first population
    assert_equal "$(cat "$T/home/testuser/.profile")" 'image profile'
    # hard links, ACLs, xattrs, sparse files, numeric ids
    # perl and perl5.X.Y are one file, hard-linked (5.36.0 on bookworm,
    # 5.40.1 on trixie)
    local versioned
    versioned=$(find "$SRC/usr/bin" -maxdepth 1 -name 'perl5.*' -samefile "$SRC/usr/bin/perl" | head -1)
    [ -n "$versioned" ] || fail "the source has no perl5.X.Y hard-linked to perl"
    assert_equal "$(stat -c %i "$T/usr/bin/perl")" "$(stat -c %i "$T/usr/bin/${versioned##*/}")"
    run getfacl -cn "$T/opt/acl-file"
    assert_output --partial 'user:4242:rw-'
    assert_equal "$(getfattr --only-values -n user.slurmjail "$T/opt/acl-file")" kept
    [ "$(du -k "$T/opt/sparse-file" | cut -f1)" -lt 1024 ]
    assert_equal "$(stat -c %u:%g "$T/opt/numeric-owner")" 4242:4343

    local marker_before
    marker_before=$(stat -c %Y.%i "$T/.slurm-jail/populated")
    start=$EPOCHREALTIME
    run "$populate" --source "$SRC" --target "$T"
    noop=$(elapsed_since "$start")
    assert_success
    assert_output --partial 'up to date'
    assert_equal "$(stat -c %Y.%i "$T/.slurm-jail/populated")" "$marker_before"
    note "populate $(du -sh "$SRC" | cut -f1) jail on host dir: first run ${first} s, no-op re-run ${noop} s"
}

@test "populate-jail: SIGKILL mid-copy, then a re-run completes the jail" {
    # setsid: populate-jail and its rsync processes form one process group
    setsid "$populate" --source "$SRC" --target "$T" >"$BATS_TEST_TMPDIR/killed.log" 2>&1 3>&- &
    local pid=$!
    for _ in $(seq 1 4000); do
        [ -e "$T/etc/passwd" ] && break
        sleep 0.005
    done
    kill -KILL -- "-$pid"
    wait "$pid" || true
    # nothing of that run survives (zombies awaiting their reaper aside)
    for _ in $(seq 1 50); do
        pgrep -r D,R,S,T -g "$pid" >/dev/null || break
        sleep 0.1
    done
    run pgrep -r D,R,S,T -g "$pid"
    assert_failure

    [ ! -e "$T/.slurm-jail/populated" ]
    [ -e "$T/.slurm-jail/in-progress" ]
    [ -n "$(jail_diff "$SRC" "$T")" ] # really killed mid-copy

    run "$populate" --source "$SRC" --target "$T"
    assert_success
    assert_output --partial 'resume: a previous run did not finish'
    assert_equal "$(jail_diff "$SRC" "$T")" ''
    run cat "$T/.slurm-jail/populated"
    assert_output --regexp "^$(marker_of "$SRC")[0-9a-f]{64}$"
    [ ! -e "$T/.slurm-jail/in-progress" ]
}

@test "populate-jail: upgrade changes system files, keeps /home and preserved paths byte-identical" {
    local v2=$BATS_TEST_TMPDIR/jail-2.0 start upgrade
    run "$populate" --source "$SRC" --target "$T" --preserve /srv/data
    assert_success
    assert_equal "$(cat "$T/srv/data/seed")" 'image seed data'

    # users work in the jail
    head -c 100000 /dev/urandom >"$T/home/testuser/results.bin"
    echo 'my own profile' >"$T/home/testuser/.profile"
    echo 'admin data' >"$T/srv/data/seed"
    local home_before data_before
    home_before=$(manifest "$T/home")
    data_before=$(manifest "$T/srv/data")

    # jail 2.0: new stamp, changed/removed/added system files, and different
    # content in the image's /home and preserved path (must not leak in)
    cp -a "$SRC" "$v2"
    chroot "$v2" /bin/sh -s 2.0 <"$images/jail/finalize-rootfs"
    rm "$v2/usr/bin/yes"
    echo 'new tool' >"$v2/usr/local/bin/new-tool"
    # same size and mtime: only a content check catches this change
    sed 's/Debian/Dabian/' "$SRC/etc/issue" >"$v2/etc/issue"
    touch -r "$SRC/etc/issue" "$v2/etc/issue"
    echo 'image profile 2' >"$v2/home/testuser/.profile"
    echo 'image seed data 2' >"$v2/srv/data/seed"

    local target_before
    target_before=$(manifest "$T")
    run "$populate" --source "$v2" --target "$T" --preserve /srv/data --dry-run
    assert_success
    assert_output --partial 'upgrade: from version 1.0 to 2.0'
    assert_output --partial '*deleting   usr/bin/yes'
    assert_output --partial 'usr/local/bin/new-tool'
    assert_output --partial 'etc/issue'
    assert_output --partial 'etc/slurm-jail-release'
    refute_output --partial 'home/testuser'
    refute_output --partial 'srv/data'
    assert_equal "$(manifest "$T")" "$target_before" # dry run changed nothing

    start=$EPOCHREALTIME
    run "$populate" --source "$v2" --target "$T" --preserve /srv/data
    upgrade=$(elapsed_since "$start")
    assert_success
    assert_output --partial 'upgrade: from version 1.0 to 2.0'
    assert_equal "$(jail_diff "$v2" "$T" --exclude=/srv/data)" ''
    [ ! -e "$T/usr/bin/yes" ]
    assert_equal "$(cat "$T/etc/issue")" "$(cat "$v2/etc/issue")"
    assert_equal "$(manifest "$T/home")" "$home_before"
    assert_equal "$(manifest "$T/srv/data")" "$data_before"
    run cat "$T/.slurm-jail/populated"
    assert_output --regexp "^$(marker_of "$v2")[0-9a-f]{64}$"
    note "populate upgrade 1.0 -> 2.0 on host dir: ${upgrade} s"
}

@test "populate-jail: two concurrent runs are serialised by the lock on the volume" {
    mkdir -p "$T/.slurm-jail"
    local lockfd pid1 pid2
    exec {lockfd}>"$T/.slurm-jail/lock"
    flock "$lockfd"
    "$populate" --source "$SRC" --target "$T" >"$BATS_TEST_TMPDIR/run1.log" 2>&1 {lockfd}>&- 3>&- &
    pid1=$!
    "$populate" --source "$SRC" --target "$T" >"$BATS_TEST_TMPDIR/run2.log" 2>&1 {lockfd}>&- 3>&- &
    pid2=$!
    sleep 2
    # both wait for the lock; neither has copied anything
    kill -0 "$pid1"
    kill -0 "$pid2"
    [ ! -e "$T/etc" ]
    grep -q 'waiting for it' "$BATS_TEST_TMPDIR/run1.log"
    grep -q 'waiting for it' "$BATS_TEST_TMPDIR/run2.log"
    exec {lockfd}>&-

    wait "$pid1"
    wait "$pid2"
    cat "$BATS_TEST_TMPDIR"/run*.log
    assert_equal "$(cat "$BATS_TEST_TMPDIR"/run*.log | grep -c 'first population')" 1
    assert_equal "$(cat "$BATS_TEST_TMPDIR"/run*.log | grep -c 'up to date')" 1
    assert_equal "$(jail_diff "$SRC" "$T")" ''
}

@test "populate-jail: a freshly mounted volume ends up root:root 0755" {
    mkdir -p "$T"
    # shellcheck disable=SC2016 # expanded by the inner bash
    run unshare --mount --propagation private bash -euc '
        mount -t tmpfs -o mode=1777 jail-volume "$2"
        mkdir "$2/lost+found"
        "$1" --source "$3" --target "$2"
        stat -c "root %u:%g %a" "$2"
        cat "$2/etc/slurm-jail-release"
    ' _ "$populate" "$T" "$SRC"
    assert_success
    assert_output --partial 'root 0:0 755'
    assert_output --partial 'SLURM_JAIL_VERSION=1.0'
    [ -z "$(ls -A "$T")" ] # the volume went away with the namespace
}
