#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A jail volume with generations (populate-jail --generations) on the
# cluster: an upgrade while jobs run. A running job keeps the jail it began
# on, a new job gets the new one, no step ever sees a generation being
# built, a killed populate changes nothing, and a rollback is one command.
# The volume is /srv/e2e-generations of the cluster's jail (on the jail's
# filesystem: a local directory, or GlusterFS when the cluster's jail is
# there: tests/shared-fs/e2e-files.bash says how), built from sources that
# share the cluster's rootfs by hard links.

# shellcheck source=tests/lib/local_cluster.bash
. "$SLURM_JAIL_ROOT/tests/lib/local_cluster.bash"

setup_file() {
    load helpers
    use_cluster
    export GEN_VOLUME=$JAIL/srv/e2e-generations
    export GEN_SOURCES=$STATE/e2e-generation-sources
    rm -rf "$GEN_VOLUME" "$GEN_SOURCES"
    install -d -m 0755 "$GEN_SOURCES"
    local v
    for v in v1 v2 v3; do make_generation_source "$v"; done
    local t0=$EPOCHREALTIME
    "$SLURM_JAIL_ROOT/images/populate_jail/populate-jail" --generations \
        --source "$GEN_SOURCES/v1" --target "$GEN_VOLUME" >&2
    note "first population of the generation volume ($(lc_call jail_fs)): $(elapsed_since "$t0") s"
}

teardown_file() {
    load helpers
    set_plugstack "$PLUGSTACK_LINE"
    rm -rf "$GEN_VOLUME" "$GEN_SOURCES"
}

# make_generation_source NAME: a jail root filesystem for the volume, the
# cluster's rootfs as hard links with the jail's own /etc (its users; a
# copy, since it is changed), the test user's home (seeded into the
# volume's /home) and a file naming it, /etc/e2e-generation. v2 and v3
# bring a library of their own too, as an upgrade brings a package.
make_generation_source() {
    local name=$1 dir=$GEN_SOURCES/$1
    cp -al "$STATE/rootfs" "$dir"
    # Without documentation, translations and manual pages (half the files:
    # every one is a round trip to a network filesystem's server).
    rm -rf "${dir:?}/etc" "${dir:?}/home" "$dir"/usr/share/{doc,locale,man,info}
    cp -a "$JAIL/etc" "$dir/etc"
    echo "$name" >"$dir/etc/e2e-generation"
    install -d -m 0755 -o "$TEST_UID" -g "$TEST_UID" "$dir/home/$TEST_USER/gen"
    if [ "$name" != v1 ]; then echo "library of $name" >"$dir/usr/lib/e2e-$name.so"; fi
    # v3's build is held mid-copy by a test: 64 MiB at its end (rsync copies
    # in name order) leave it time to be.
    if [ "$name" = v3 ]; then head -c $((64 << 20)) /dev/urandom >"$dir/var/e2e-late"; fi
}

setup() {
    load helpers
    load_assertions
    POPULATE=$SLURM_JAIL_ROOT/images/populate_jail/populate-jail
    OUT=/home/$TEST_USER/gen
    # What a job step on node1 reads: the generation file, the libraries of
    # the upgrades and the user's data.
    SEEN="cat /etc/e2e-generation; ls /usr/lib | grep '^e2e-' || true; cat $OUT/data"
    set_plugstack "required chroot.so jail=/mnt/jail/srv/e2e-generations"
}

teardown() {
    # A build a test held (SIGSTOP) ends with it, however the test ended.
    if [ -n "${BUILD_PID:-}" ]; then kill -KILL -- "-$BUILD_PID" 2>/dev/null || true; fi
    cancel_test_jobs
    wait_until 60 node_is_idle node1 || true
}

# live_now: the volume's live generation number; last_generation: the
# highest built.
live_now() { sed -n 's/^generation=//p' "$GEN_VOLUME/.slurm-jail/live"; }
last_generation() {
    find "$GEN_VOLUME/.slurm-jail/generations" -mindepth 1 -maxdepth 1 -regex '.*/[0-9]+' -printf '%f\n' |
        sort -n | tail -1
}

# switched: after a switch made on this machine. The nodes of a local jail
# see it at once (the same kernel). On GlusterFS a node's client holds the
# old name and what it read for its entry and attribute timeouts (1 s), and
# chroot.so takes the switch within recheck= (60 s), which the tests do not
# wait for: past the client's timeouts, they drop each node's record of the
# live file, as if recheck= seconds had passed.
switched() {
    if lc_call shared_jail; then
        sleep 1.5
        rm -f "$STATE"/nodes/*/run/jail-live
    fi
}

@test "a job running across an upgrade keeps the jail it began on; a new job on the same node gets the new one" {
    [ "$(cat "$GEN_VOLUME/.slurm-jail/generations/$(live_now)/etc/e2e-generation")" = v1 ] ||
        "$POPULATE" --source "$GEN_SOURCES/v1" --target "$GEN_VOLUME" >&2
    echo 'written by the user' >"$GEN_VOLUME/home/$TEST_USER/gen/data"
    run ush "sbatch --parsable -w node1 -o $OUT/job.out --wrap 'cat /etc/e2e-generation; exec sleep 300'"
    assert_success
    local job=$output
    wait_until 60 grep -qsx v1 "$GEN_VOLUME/home/$TEST_USER/gen/job.out"

    run "$POPULATE" --source "$GEN_SOURCES/v2" --target "$GEN_VOLUME"
    assert_success
    assert_output --partial 'is live, version'
    switched
    local t0=$EPOCHREALTIME
    run ush "srun -w node1 sh -c '$SEEN'"
    note "switch to the first step on the new generation, node1 ($(lc_call jail_fs)): $(elapsed_since "$t0") s"
    assert_success
    assert_line v2
    assert_line e2e-v2.so
    assert_line 'written by the user'

    run ush "srun --jobid=$job --overlap -w node1 sh -c '$SEEN'"
    assert_success
    assert_line v1
    refute_output --partial e2e-v2
    assert_line 'written by the user'
}

@test "populate-jail --rollback: the next job gets the previous generation again, and the users' data is the same" {
    "$POPULATE" --source "$GEN_SOURCES/v2" --target "$GEN_VOLUME" >&2
    echo 'kept across rollbacks' >"$GEN_VOLUME/home/$TEST_USER/gen/data"
    switched
    run ush "srun -w node1 sh -c '$SEEN'"
    assert_line v2
    local now
    now=$(live_now)
    run "$POPULATE" --rollback --target "$GEN_VOLUME"
    assert_success
    [ "$(live_now)" != "$now" ]
    switched
    run ush "srun -w node1 sh -c '$SEEN'"
    assert_success
    refute_line v2
    refute_output --partial e2e-v2
    assert_line 'kept across rollbacks'
    "$POPULATE" --rollback --target "$GEN_VOLUME" >&2
    switched
    run ush "srun -w node1 sh -c '$SEEN'"
    assert_line v2
}

@test "a step started while a generation is built sees only the live one; a killed build changes nothing" {
    "$POPULATE" --source "$GEN_SOURCES/v1" --target "$GEN_VOLUME" >&2
    echo 'during the build' >"$GEN_VOLUME/home/$TEST_USER/gen/data"
    switched
    local building=$GEN_VOLUME/.slurm-jail/generations/$(($(last_generation) + 1)).building
    setsid "$POPULATE" --source "$GEN_SOURCES/v3" --target "$GEN_VOLUME" >"$BATS_TEST_TMPDIR/build.log" 2>&1 3>&- &
    local pid=$!
    BUILD_PID=$pid
    # Held mid-copy, once its /etc is v3's (rsync copies in name order), so
    # the step surely runs while the generation is half built.
    local i
    for ((i = 0; i < 3000; i++)); do
        [ -s "$building/etc/e2e-generation" ] && break
        sleep 0.01
    done
    kill -STOP -- "-$pid"
    [ "$(cat "$building/etc/e2e-generation")" = v3 ] ||
        fail "the build was not under way: $(cat "$BATS_TEST_TMPDIR/build.log")"
    run ush "srun -w node1 sh -c '$SEEN'"
    kill -KILL -- "-$pid"
    wait "$pid" || true
    assert_success
    assert_line v1
    refute_output --partial e2e-v3
    assert_line 'during the build'
    [ -d "$building" ] || fail "no generation was being built: $(cat "$BATS_TEST_TMPDIR/build.log")"
    run ush "srun -w node1 sh -c '$SEEN'"
    assert_line v1

    run "$POPULATE" --source "$GEN_SOURCES/v3" --target "$GEN_VOLUME"
    assert_success
    [ ! -e "$building" ]
    switched
    run ush "srun -w node1 sh -c '$SEEN'"
    assert_line v3
    assert_line e2e-v3.so
}

@test "populate-jail --prune keeps a generation while a job on it runs, and deletes it once the job ended" {
    local gens=$GEN_VOLUME/.slurm-jail/generations record=$GEN_VOLUME/.slurm-jail/nodes/node1
    # v1, v2 and v3 are built by now; v2 live again (no build), a job on it.
    "$POPULATE" --source "$GEN_SOURCES/v2" --target "$GEN_VOLUME" >&2
    local held
    held=$(live_now)
    switched
    run ush "sbatch --parsable -w node1 -o /dev/null --wrap 'exec sleep 300'"
    assert_success
    local job=$output
    # Its first step began on the generation: the job holds it.
    wait_until 60 grep -qsx "$held" "$STATE/nodes/node1/run/held/job.$job"
    # v1, then v3 live: the job's generation is neither live nor previous.
    "$POPULATE" --source "$GEN_SOURCES/v1" --target "$GEN_VOLUME" >&2
    "$POPULATE" --source "$GEN_SOURCES/v3" --target "$GEN_VOLUME" >&2
    switched
    run ush "srun -w node1 sh -c '$SEEN'"
    assert_line v3
    assert_equal "$(grep -c "^generation=\($held\|$(live_now)\)$" "$record")" 2

    run "$POPULATE" --holders --target "$GEN_VOLUME"
    assert_success
    assert_line --regexp "^generation $held: version .*; held by node1 \(recorded .*\)$"
    run "$POPULATE" --prune --target "$GEN_VOLUME"
    assert_success
    assert_output --partial "kept generation $held: held by node1"
    [ -d "$gens/$held" ]

    run ush "scancel $job"
    assert_success
    wait_until 60 node_is_idle node1
    # The job's end on the node (its epilog) lets go of the generation.
    wait_until 30 sh -c "! grep -qx 'generation=$held' '$record'"
    run "$POPULATE" --prune --target "$GEN_VOLUME"
    assert_success
    assert_output --partial "deleted generation $held"
    [ ! -e "$gens/$held" ]
    run ush "srun -w node1 sh -c '$SEEN'"
    assert_success
    assert_line v3
}
