#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # $images comes from helpers.bash
# slurm-jail-backup with Debian's restic against a small hand-made jail volume
# (a live generation whose data paths are /home and /opt/datasets) and a local
# repository, all in the test's temporary directories. The users are numeric
# ids only: nothing is added to this machine's user database.

load helpers

backup=$images/populate_jail/slurm-jail-backup

setup_file() {
    command -v restic >/dev/null || fail "restic is missing: hack/install-deps installs it (hack/deps/images.txt)"
    # The last step of a restore into a user's directory runs as that user,
    # who must reach the volume: bats makes its run directory 0700.
    chmod 0711 "$BATS_RUN_TMPDIR"
    export V=$BATS_FILE_TMPDIR/vol REPO=$BATS_FILE_TMPDIR/repo
    export RESTIC_CACHE_DIR=$BATS_FILE_TMPDIR/restic-cache
    export RESTIC_REPOSITORY=$REPO RESTIC_PASSWORD_FILE=$BATS_FILE_TMPDIR/password
    echo 'correct horse battery staple' >"$RESTIC_PASSWORD_FILE"
    make_volume "$V"
    manifest "$V/home/alice" >"$BATS_FILE_TMPDIR/alice.manifest"
    manifest "$V/home/bob" >"$BATS_FILE_TMPDIR/bob.manifest"
    "$backup" backup --volume "$V" --repo "$REPO" --init >"$BATS_FILE_TMPDIR/first.out" 2>&1 ||
        fail "the first backup failed: $(cat "$BATS_FILE_TMPDIR/first.out")"
}

# A writer (start_writer) ends after its current version once asked to.
teardown() {
    if [ -n "${writer:-}" ]; then
        touch "$BATS_TEST_TMPDIR/stop-writer"
        wait "$writer" || true
    fi
}

# make_volume DIR: a jail volume with generation 1 live (system files only
# there), the users' data in /home and /opt/datasets: owners, modes (setuid,
# setgid, sticky), ACLs (a default one too), xattrs of a file and of a
# directory, hard links, a symbolic link, a name with spaces and wildcard
# characters.
make_volume() {
    local v=$1 a=$1/home/alice b=$1/home/bob
    mkdir -p "$v/.slurm-jail/generations/1/etc" "$v/.slurm-jail/generations/1/home" \
        "$a/thesis" "$a/shared" "$a/drop" "$b" "$v/opt/datasets/shared"
    chmod 0700 "$v/.slurm-jail" "$v/.slurm-jail/generations"
    echo 'root:x:0:0:root:/root:/bin/bash' >"$v/.slurm-jail/generations/1/etc/passwd"
    printf '# slurm-jail: the live generation (written by populate-jail; do not edit)\ngeneration=1\ndata=/home\ndata=/opt/datasets\n' \
        >"$v/.slurm-jail/live"
    echo 'alice notes, version 1' >"$a/notes.txt"
    setfattr -n user.origin -v lab-7 "$a/notes.txt"
    head -c 300000 /dev/urandom >"$a/thesis/chapter1.tex"
    ln "$a/thesis/chapter1.tex" "$a/thesis/chapter1-link.tex"
    echo draft >"$a/a [draft] *.txt"
    ln -s notes.txt "$a/notes-link"
    echo 'for bob' >"$a/shared/for-bob.txt"
    printf '#!/bin/sh\necho tool\n' >"$a/tool"
    chown -R -h 1001:1001 "$a"
    chmod 0750 "$a"
    chmod 4750 "$a/tool"
    chmod 2750 "$a/thesis"
    chmod 1777 "$a/drop"
    setfattr -n user.project -v p42 "$a/shared"
    setfacl -m u:1002:rw "$a/shared/for-bob.txt"
    setfacl -d -m u:1002:rx "$a/shared"
    head -c 200000 /dev/urandom >"$b/data.bin"
    chmod 0600 "$b/data.bin"
    chown -R 1002:1002 "$b"
    chmod 0700 "$b"
    echo 'dataset readme' >"$v/opt/datasets/shared/readme"
    chown -R 1003:1003 "$v/opt/datasets/shared"
    chmod 2775 "$v/opt/datasets/shared"
}

# manifest DIR: each entry's path, type, mode, owner, size, mtime and link
# target; each file's sha256; the ACLs and user xattrs; and which files are
# hard links of one another.
manifest() {
    (
        cd "$1" || exit
        find . -printf '%p %y %m %U:%G %s %T@ %l\n' | LC_ALL=C sort
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum --
        find . ! -type l -print0 | LC_ALL=C sort -z | xargs -0 getfacl -n --
        find . -print0 | LC_ALL=C sort -z | xargs -0 getfattr -h -d -m '^user\.' --
        find . -type f -links +1 -printf '%i %p\n' | LC_ALL=C sort -k2 |
            awk '{ g[$1] = g[$1] " " $2 } END { for (i in g) print "linked:" g[i] }' | LC_ALL=C sort
    ) 2>&1
}

# the line of manifest DIR's first listing for one entry (./NAME)
entry_of() { manifest "$1" | grep -F "./$2 " | head -1; }

snapshot_count() { find "$REPO/snapshots" -type f | wc -l; }

# start_writer PAUSE FILE STOP...: rewrites FILE in place, one whole version
# after the other (8 MiB of 'a', then of 'b'), PAUSE seconds between two, until
# the command STOP succeeds or the test ends.
start_writer() {
    local pause=$1 f=$2
    shift 2
    head -c 8M /dev/zero | tr '\0' a >"$BATS_TEST_TMPDIR/version-a"
    head -c 8M /dev/zero | tr '\0' b >"$BATS_TEST_TMPDIR/version-b"
    cp "$BATS_TEST_TMPDIR/version-a" "$f"
    (
        while [ ! -e "$BATS_TEST_TMPDIR/stop-writer" ] && ! "$@"; do
            dd if="$BATS_TEST_TMPDIR/version-a" of="$f" bs=1M conv=notrunc status=none
            dd if="$BATS_TEST_TMPDIR/version-b" of="$f" bs=1M conv=notrunc status=none
            sleep "$pause"
        done
    ) 3>&- &
    writer=$!
}

@test "slurm-jail-backup: --help and man page" {
    run "$backup" --help
    assert_success
    assert_output --partial 'Usage: slurm-jail-backup backup --volume DIR --repo REPO [--preserve PATH]... [--init]'
    assert_man_clean "$images/populate_jail/man/slurm-jail-backup.8"
    assert_output --partial 'slurm-jail-backup'
}

@test "backup: the live generation's data paths and the live file, never the system files" {
    run cat "$BATS_FILE_TMPDIR/first.out"
    assert_output --partial 'created the restic repository'
    assert_output --partial "backing up /home /opt/datasets and the live file of $V"
    assert_output --regexp 'done in [0-9.]+ s: snapshot [0-9a-f]{8} \(1 pass\)'
    run restic ls latest
    assert_success
    assert_line /home/alice/notes.txt
    assert_line '/home/alice/a [draft] *.txt'
    assert_line /home/bob/data.bin
    assert_line /opt/datasets/shared/readme
    assert_line /.slurm-jail/live
    refute_line --regexp '^/\.slurm-jail/generations'
    refute_line --regexp '^/etc'
    run restic dump latest /.slurm-jail/live
    assert_output "$(cat "$V/.slurm-jail/live")"
}

@test "scheduling: systemd accepts the units; the man page's cron line backs up, reading nothing unchanged" {
    local u=$BATS_TEST_TMPDIR/units line
    mkdir "$u"
    sed "s#/usr/local/bin/slurm-jail-backup#$backup#" "$images/populate_jail/systemd/slurm-jail-backup.service" \
        >"$u/slurm-jail-backup.service"
    cp "$images/populate_jail/systemd/slurm-jail-backup.timer" "$u/"
    run systemd-analyze verify --man=no "$u/slurm-jail-backup.timer" "$u/slurm-jail-backup.service"
    assert_success
    assert_output ''
    grep -qx 'OnCalendar=\*-\*-\* 03:17:00' "$u/slurm-jail-backup.timer"

    # the line as the man page prints it, with this test's files in place of
    # /etc/slurm-jail/backup.env, /usr/local/bin and /run; run as cron does
    line=$(man -l -P cat "$images/populate_jail/man/slurm-jail-backup.8" | sed -n 's/^ *17 3 \* \* \* root //p')
    [ -n "$line" ] || fail "no cron line in the man page"
    printf 'RESTIC_REPOSITORY=%s\nRESTIC_PASSWORD_FILE=%s\nRESTIC_CACHE_DIR=%s\nSLURM_JAIL_VOLUME=%s\n' \
        "$REPO" "$RESTIC_PASSWORD_FILE" "$RESTIC_CACHE_DIR" "$V" >"$BATS_TEST_TMPDIR/backup.env"
    line=${line//\/etc\/slurm-jail\/backup.env/$BATS_TEST_TMPDIR/backup.env}
    line=${line//\/usr\/local\/bin\/slurm-jail-backup/$backup}
    line=${line//\/run\//$BATS_TEST_TMPDIR/}
    run env -i PATH=/usr/bin:/bin sh -c "$line"
    assert_success
    assert_output --partial "backing up /home /opt/datasets and the live file of $V"
    assert_output --regexp 'Files: +0 new, +0 changed, +[0-9]+ unmodified'
    assert_output --partial '(1 pass)'
}

@test "restore: one file in place, then a whole home; bytes, owners, modes, ACLs, xattrs and hard links as backed up" {
    local a=$V/home/alice
    rm "$a/notes.txt"
    echo 'rewritten by mistake' >"$a/thesis/chapter1.tex"
    echo 'written after the backup' >"$a/new.txt"
    chown 1001:1001 "$a/new.txt"

    run "$backup" restore --volume "$V" --repo "$REPO" --path /home/alice/notes.txt
    assert_success
    assert_output --partial "restored /home/alice/notes.txt from snapshot"
    assert_output --partial '(placed as uid 1001)'
    assert_equal "$(entry_of "$a" notes.txt)" "$(grep -F './notes.txt ' "$BATS_FILE_TMPDIR/alice.manifest" | head -1)"
    assert_equal "$(cat "$a/notes.txt")" 'alice notes, version 1'
    assert_equal "$(getfattr --only-values -n user.origin "$a/notes.txt")" lab-7

    run "$backup" restore --volume "$V" --repo "$REPO" --path /home/alice
    assert_success
    assert_output --partial "what was there before is kept as $a.before-restore-"
    diff <(manifest "$a") "$BATS_FILE_TMPDIR/alice.manifest"
    # what the home held before the restore is kept whole beside it
    local kept
    kept=$(compgen -G "$a.before-restore-*")
    assert_equal "$(cat "$kept/new.txt")" 'written after the backup'
    assert_equal "$(cat "$kept/thesis/chapter1.tex")" 'rewritten by mistake'
    assert_equal "$(stat -c '%u:%g %a' "$V/home")" '0:0 755'
    rm -rf "$kept"
}

@test "backup: a file rewritten in place while it is read is read again; it restores as one whole version" {
    local f=$V/home/bob/simulation.out n0
    n0=$(snapshot_count)
    new_snapshot() { [ "$(snapshot_count)" -gt "$n0" ]; }
    # The writer runs until the first pass has saved its snapshot.
    start_writer 0.01 "$f" new_snapshot
    run "$backup" backup --volume "$V" --repo "$REPO"
    assert_success
    assert_output --regexp 'pass 1: [0-9]+ files changed while it ran; reading them again'
    assert_output --partial 'pass 2: restic backup against snapshot'
    refute_output --partial 'warning'
    # only the last pass's snapshot is kept
    assert_equal "$(snapshot_count)" "$((n0 + 1))"
    run "$backup" restore --repo "$REPO" --path /home/bob/simulation.out --to "$BATS_TEST_TMPDIR/out"
    assert_success
    local got=$BATS_TEST_TMPDIR/out/home/bob/simulation.out
    cmp -s "$got" "$BATS_TEST_TMPDIR/version-a" || cmp -s "$got" "$BATS_TEST_TMPDIR/version-b" ||
        fail "restored a torn file: $(tr -s ab <"$got" | head -c 80) ($(stat -c %s "$got") bytes)"

    # A writer that never stops: the file is named, the backup still exits 0.
    wait "$writer"
    start_writer 0.05 "$f" false
    run "$backup" backup --volume "$V" --repo "$REPO" --passes 1
    assert_success
    assert_output --regexp 'warning: [0-9]+ files changed while the last of 1 passes read the volume'
    assert_line '  /home/bob/simulation.out'
}

@test "restore, hostile user: a planted symbolic link is never followed; root writes nothing outside the volume" {
    local a=$V/home/alice outside=$BATS_TEST_TMPDIR/outside
    mkdir -p "$outside"
    echo 'root:x:0:0:root:/root:/bin/bash' >"$outside/passwd"
    local before
    before=$(manifest "$outside")

    # alice turns the file to restore into a link to a file she cannot write
    ln -sfn "$outside/passwd" "$a/notes.txt"
    run "$backup" restore --volume "$V" --repo "$REPO" --path /home/alice/notes.txt
    assert_success
    assert_output --partial '(placed as uid 1001)'
    [ -f "$a/notes.txt" ] && [ ! -L "$a/notes.txt" ]
    assert_equal "$(cat "$a/notes.txt")" 'alice notes, version 1'
    assert_equal "$(readlink "$(compgen -G "$a/notes.txt.before-restore-*")")" "$outside/passwd"

    # ... and a directory on the way into a link to a directory she cannot write
    rm -rf "$a/thesis"
    ln -s "$outside" "$a/thesis"
    run "$backup" restore --volume "$V" --repo "$REPO" --path /home/alice/thesis/chapter1.tex
    assert_failure 1
    assert_output --partial "$a/thesis is a symbolic link (to $outside), never followed"
    assert_output --partial 'restore it with --to DIR'

    # a whole home with such a link inside: the home is moved aside, not walked
    run "$backup" restore --volume "$V" --repo "$REPO" --path /home/alice
    assert_success
    [ -d "$a/thesis" ] && [ ! -L "$a/thesis" ]
    assert_equal "$(manifest "$outside")" "$before"
    assert_equal "$(cat "$outside/passwd")" 'root:x:0:0:root:/root:/bin/bash'

    # a directory other users may write: refused, before anything is read
    run "$backup" restore --volume "$V" --repo "$REPO" --path /opt/datasets/shared/readme
    assert_failure 1
    assert_output --partial "$V/opt/datasets/shared is writable by group or others (mode 2775)"
    # --to a directory a user owns
    mkdir "$BATS_TEST_TMPDIR/alices"
    chown 1001 "$BATS_TEST_TMPDIR/alices"
    run "$backup" restore --repo "$REPO" --path /home/bob --to "$BATS_TEST_TMPDIR/alices"
    assert_failure 1
    assert_output --partial "$BATS_TEST_TMPDIR/alices is not held by root (owner uid 1001"
    assert_equal "$(ls -A "$BATS_TEST_TMPDIR/alices")" ''
    assert_equal "$(manifest "$outside")" "$before"
}

@test "single-directory jail: /home and the --preserve paths, not the system files" {
    local v=$BATS_TEST_TMPDIR/single
    mkdir -p "$v/.slurm-jail" "$v/etc" "$v/home/carol" "$v/srv/data"
    chmod 0700 "$v/.slurm-jail"
    echo 'SLURM_JAIL_VERSION=1.0' >"$v/.slurm-jail/populated"
    echo 'root:x:0:0::/root:/bin/sh' >"$v/etc/passwd"
    echo carol >"$v/home/carol/f"
    echo 'lab data' >"$v/srv/data/x"
    run "$backup" backup --volume "$v" --repo "$REPO" --host single --preserve /srv/data
    assert_success
    assert_output --partial "backing up /home /srv/data of $v"
    run restic ls latest --host single
    assert_line /home/carol/f
    assert_line /srv/data/x
    refute_line --regexp '^/(etc|\.slurm-jail)'
    echo changed >"$v/srv/data/x"
    run "$backup" restore --volume "$v" --repo "$REPO" --host single --preserve /srv/data --path /srv/data/x
    assert_success
    assert_equal "$(cat "$v/srv/data/x")" 'lab data'
}

@test "check: a sound repository passes; a damaged pack file is found" {
    run "$backup" check --repo "$REPO"
    assert_success
    assert_output --partial 'has no errors'
    local damaged=$BATS_TEST_TMPDIR/damaged pack
    cp -a "$REPO" "$damaged"
    pack=$(find "$damaged/data" -type f -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2)
    printf 'XXXXXXXX' | dd of="$pack" bs=1 seek=$(($(stat -c %s "$pack") / 2)) conv=notrunc status=none
    run "$backup" check --repo "$damaged" --read-data
    assert_failure 1
    assert_output --partial "the repository $damaged is damaged"
    assert_output --partial 'back up into a new repository (--init)'
}

@test "bad input: each error names the cause and the fix" {
    run "$backup"
    assert_failure 2
    assert_output --partial 'name a command: backup, restore, check or snapshots'
    run "$backup" backup --repo "$REPO"
    assert_failure 2
    assert_output --partial -- '--volume DIR is required'
    run "$backup" backup --volume "$V" --repo "$REPO" --passes 0
    assert_failure 2
    assert_output --partial 'give a number from 1 to 9'
    run "$backup" restore --volume "$V" --repo "$REPO" --path home/alice
    assert_failure 2
    assert_output --partial 'must be an absolute path inside the jail'
    run "$backup" restore --volume "$V" --repo "$REPO" --path /home/alice/../bob
    assert_failure 2
    assert_output --partial "use a normalised path"
    run "$backup" check --repo "$REPO" --to /tmp
    assert_failure 2
    assert_output --partial "--to is not an option of 'check'"

    mkdir -p "$BATS_TEST_TMPDIR/plain/home"
    run "$backup" backup --volume "$BATS_TEST_TMPDIR/plain" --repo "$REPO"
    assert_failure 1
    assert_output --partial 'is not a jail volume: it has no .slurm-jail/ directory'
    run "$backup" restore --volume "$V" --repo "$REPO" --path /etc/passwd
    assert_failure 1
    assert_output --partial 'is not in the users'"'"' data'
    assert_output --partial 'restore it elsewhere with --to DIR'

    SLURM_JAIL_BACKUP_RESTIC=/nonexistent/restic run "$backup" snapshots --repo "$REPO"
    assert_failure 1
    assert_output --partial "restic not found ('/nonexistent/restic'); install it (apt-get install restic)"
    RESTIC_PASSWORD_FILE='' run "$backup" snapshots --repo "$REPO"
    assert_failure 1
    assert_output --partial 'no repository password; pass --password-file FILE'
    echo wrong >"$BATS_TEST_TMPDIR/wrong"
    run "$backup" snapshots --repo "$REPO" --password-file "$BATS_TEST_TMPDIR/wrong"
    assert_failure 1
    assert_output --partial 'wrong password for the repository'
    run "$backup" backup --volume "$V" --repo "$BATS_TEST_TMPDIR/no-repo"
    assert_failure 1
    assert_output --partial "no restic repository at $BATS_TEST_TMPDIR/no-repo; pass --init"
    run "$backup" restore --volume "$V" --repo "$REPO" --path /home/alice --snapshot deadbeef
    assert_failure 1
    assert_output --partial "snapshot 'deadbeef' is not in $REPO"
    run "$backup" restore --volume "$V" --repo "$REPO" --path /home/nobody
    assert_failure 1
    assert_output --partial '/home/nobody is not in snapshot'

    cp "$V/.slurm-jail/live" "$BATS_TEST_TMPDIR/live"
    echo 'data=/home/../etc' >>"$V/.slurm-jail/live"
    run "$backup" backup --volume "$V" --repo "$REPO"
    cp "$BATS_TEST_TMPDIR/live" "$V/.slurm-jail/live"
    assert_failure 1
    assert_output --partial "data path '/home/../etc' is not a normalised absolute path"
    assert_output --partial 'populate-jail --rollback'
}
