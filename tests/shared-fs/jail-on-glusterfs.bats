#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The jail on a real shared filesystem: the local cluster with its jail on a
# GlusterFS volume (local-cluster up --jail-fs glusterfs: a storage host,
# every node and the login host mounting it over FUSE with a client of its
# own). populate-jail's tests and the e2e files that touch the jail run
# against it; then what only a network filesystem shows: how many requests
# chroot.so's entry of a step makes to the jail's server (GlusterFS's own
# per-brick counters), what a stopped or hung server does to new steps, and
# slurm-jail-fs-check draining and resuming a node.
#
# SLURM_JAIL_SHARED_FS_E2E="01-jail-entry ...": the e2e files to run (default:
# e2e-files.bash). Counts and durations go to the TAP stream as comments.

setup_file() {
    : "${SLURM_JAIL_ROOT:?run through tests/run-all, or set SLURM_JAIL_ROOT}"
    export SLURM_JAIL_LOCAL_JAIL_FS=glusterfs
}

setup() {
    # shellcheck source=tests/lib/counted_bats.bash
    . "$SLURM_JAIL_ROOT/tests/lib/counted_bats.bash"
    # shellcheck source=tests/lib/local_cluster.bash
    . "$SLURM_JAIL_ROOT/tests/lib/local_cluster.bash"
    # shellcheck source=tests/e2e/helpers.bash
    . "$SLURM_JAIL_ROOT/tests/e2e/helpers.bash"
    load_assertions
    # shellcheck source=tests/shared-fs/e2e-files.bash
    . "$SLURM_JAIL_ROOT/tests/shared-fs/e2e-files.bash"
    E2E_FILES=${SLURM_JAIL_SHARED_FS_E2E:-${shared_fs_e2e_files[*]}}
    STEP_OPS=${SLURM_JAIL_BUILD_DIR:-$SLURM_JAIL_ROOT/build}/bench/sjail-step-ops
    # The cluster's plugstack.conf line, with a state directory of its own
    # (beside chroot.so's on node1) so that Slurm's steps keep theirs.
    NODE_SETTINGS=(jail=/mnt/jail state=/run/slurm-jail/step-ops)
    PROBE_MEMO=/run/slurm-jail/step-ops/jail-probe
}

# step_ops N GAP_MS [SETTING...]: chroot.so's entry of a step, N times on
# node1; prints the requests the jail's server served meanwhile, one "FOP
# COUNT" line each (nothing: none).
step_ops() {
    local n=$1 gap=$2
    shift 2
    lc_call storage_counts >/dev/null # the counters from now on
    on_node node1 "$STEP_OPS" --steps "$n" --gap-ms "$gap" "${NODE_SETTINGS[@]}" "$@" >"$BATS_TEST_TMPDIR/step-ops.json" ||
        { cat "$BATS_TEST_TMPDIR/step-ops.json"; return 1; }
    lc_call storage_counts
}

no_gluster_process() { ! pgrep -f '^(glusterd|glusterfs|/usr/sbin/glusterfsd) ' >/dev/null; }

total_of() { awk '{ n += $2 } END { print n + 0 }' <<<"$1"; }

compat_file() {
    case " $E2E_FILES " in
        *" $1 "*) ;;
        *) skip "not in SLURM_JAIL_SHARED_FS_E2E" ;;
    esac
    SLURM_JAIL_E2E_KEEP=yes counted_bats shared-fs "$1" "$SLURM_JAIL_ROOT/tests/e2e/$1.bats"
}

@test "up --jail-fs glusterfs: the jail is populated on the volume, every host mounts it with a client of its own" {
    local t0=$EPOCHREALTIME
    "$LC" down >&2
    run "$LC" up --jail-fs glusterfs
    printf '# shared-fs: local-cluster up --jail-fs glusterfs took %s s\n' "$(elapsed_since "$t0")" >&3
    assert_success
    assert_output --partial "GlusterFS volume 'jail' on"
    install_probe
    # What populate-jail wrote went through the volume to its brick.
    assert [ -f "$STATE/storage/brick/etc/slurm-jail-release" ]
    run stat -f -c %T "$JAIL"
    assert_output fuseblk
    local host
    for host in node1 node2; do
        run nsenter -t "$(slurmd_pid "$host")" -m -- findmnt -n -o FSTYPE,SOURCE /mnt/jail
        assert_output --regexp "^fuse\.glusterfs +$(lc_call storage_addr):jail$"
    done
    # A client per host: node1, node2, the login host and this machine; a
    # login (local-cluster run) uses the login host's.
    ush true
    run pgrep -c -f '^glusterfs --volfile-server='
    assert_output 4
    run ush "srun -N2 $PROBE"
    assert_success
    assert_in_jail 2
}

@test "shared jail: populate-jail's tests with their targets on the volume" {
    local dir=$JAIL/populate-tests
    install -d -m 0755 "$dir"
    SLURM_JAIL_POPULATE_TARGETS=$dir counted_bats shared-fs populate \
        "$SLURM_JAIL_ROOT/tests/images/populate.bats"
    rmdir "$dir"
}

@test "shared jail: e2e 01-jail-entry" { compat_file 01-jail-entry; }
@test "shared jail: e2e 02-shared-root" { compat_file 02-shared-root; }
@test "shared jail: e2e 06-fail-closed" { compat_file 06-fail-closed; }
@test "shared jail: e2e 09-ssh" { compat_file 09-ssh; }
@test "shared jail: e2e 20-gpu" { compat_file 20-gpu; }
@test "shared jail: e2e 36-jail-generations" { compat_file 36-jail-generations; }
@test "shared jail: e2e 07-soak" { compat_file 07-soak; }

@test "steps after the first on a node make no request to the jail's server; each probe is counted" {
    "$LC" up >&2
    [ -x "$STEP_OPS" ] || fail "$STEP_OPS is not built"
    # The first step on the node may probe (its last answer is old).
    run step_ops 1 0
    assert_success
    # Ten steps, 1.2 s apart: past the FUSE client's 1 s entry and
    # attribute timeouts, so the kernel would ask for anything not in hand.
    run step_ops 10 1200
    assert_success
    printf '# shared-fs: 10 steps within recheck=: %s requests to the jail server (%s)\n' \
        "$(total_of "$output")" "$(echo "$output" | tr '\n' ' ')" >&3
    assert_equal "$(total_of "$output")" 0
    # recheck=0: every step probes, and the server counts each probe.
    run step_ops 10 1200 recheck=0
    assert_success
    printf '# shared-fs: 10 steps with recheck=0: %s requests (%s)\n' \
        "$(total_of "$output")" "$(echo "$output" | tr '\n' ' ')" >&3
    [ "$(total_of "$output")" -ge 10 ] || fail "10 probes made $(total_of "$output") requests: $output"
}

# jail_answers_here: this machine's and the login host's clients answer.
jail_answers_here() { stat "$JAIL/etc/passwd" "$STATE/login/jail/etc/passwd" >/dev/null 2>&1; }

# step_on_hung_server LABEL PAUSE SETTING...: one step on node1 with the
# jail's brick stopped (PAUSE seconds before the step) and build_timeout=5.
# It fails within 5 to 7 s with the one line naming the filesystem; the
# brick answers again afterwards and the probe's child goes.
step_on_hung_server() {
    local label=$1 pause=$2 brick out=$BATS_TEST_TMPDIR/step.json rc=0 took
    shift 2
    brick=$(pgrep -f '^/usr/sbin/glusterfsd .*--volfile-id jail\.') || fail "no brick process"
    kill -STOP "$brick"
    sleep "$pause"
    # Into a file: the probe's child, stuck on the server, keeps its output
    # open until GlusterFS gives up on the server; the step does not wait.
    on_node node1 "$STEP_OPS" --steps 1 "$@" build_timeout=5 >"$out" 2>&1 || rc=$?
    took=$(jq -r .longest_seconds "$out")
    kill -CONT "$brick"
    printf '# shared-fs: %s: the step failed after %s s (build_timeout=5)\n' "$label" "$took" >&3
    assert_equal "$rc" 1
    run jq -r '.errors[0]' "$out"
    assert_output "the jail's filesystem did not answer within build_timeout=5 s (fuse.glusterfs $(lc_call storage_addr):jail mounted at /mnt/jail); new steps on this node fail until its server answers again"
    awk -v t="$took" 'BEGIN { exit !(t >= 5 && t < 7) }' || fail "the step took $took s"
    # The probe's child is gone once the server answers (or GlusterFS gives up).
    wait_until 20 bash -c '! pgrep -x sjail-step-ops'
}

@test "a hung server: a step's probe gives up within build_timeout= with one line naming the filesystem, and the next step after it answers works" {
    on_node node1 rm -f "$PROBE_MEMO" # the last answer is old
    step_on_hung_server "hung server" 0 "${NODE_SETTINGS[@]}"
    # Answering again: the next step asks and works, slurmd untouched.
    wait_until 30 on_node node1 "$STEP_OPS" --steps 1 "${NODE_SETTINGS[@]}"
    wait_until 30 jail_answers_here
    run ush "srun -w node1 $PROBE"
    assert_success
    assert_in_jail 1
}

@test "jail= below the volume's root: with a hung server the step's walk to the jail waits on nothing, its probe gives up within build_timeout=" {
    # A recent answer (probes are due only every recheck= seconds), from a
    # step on the volume's root.
    on_node node1 rm -f "$PROBE_MEMO"
    run on_node node1 "$STEP_OPS" --steps 1 "${NODE_SETTINGS[@]}"
    assert_success
    # 1.5 s: past the FUSE client's 1 s entry timeout, the jail's last
    # component, below the volume's root, is no longer the kernel's to answer.
    step_on_hung_server "hung server, jail= below the root" 1.5 \
        jail=/mnt/jail/usr state=/run/slurm-jail/step-ops
    wait_until 30 on_node node1 "$STEP_OPS" --steps 1 "${NODE_SETTINGS[@]}"
}

@test "a stopped server: a step's probe fails at once with one line naming the filesystem; restarted, the next step works" {
    on_node node1 rm -f "$PROBE_MEMO"
    lc_call gluster_cli volume stop jail >&2
    local t0=$EPOCHREALTIME
    run on_node node1 "$STEP_OPS" --steps 1 "${NODE_SETTINGS[@]}"
    printf '# shared-fs: stopped server: the step failed after %s s\n' "$(elapsed_since "$t0")" >&3
    assert_failure
    assert_output --partial "the jail's filesystem (fuse.glusterfs $(lc_call storage_addr):jail mounted at /mnt/jail) cannot serve the jail"
    lc_call gluster_cli volume start jail >&2
    wait_until 30 on_node node1 "$STEP_OPS" --steps 1 "${NODE_SETTINGS[@]}"
    wait_until 30 jail_answers_here
    run ush "srun -w node1 $PROBE"
    assert_success
    assert_in_jail 1
}

# ctl CMD...: CMD as root next to slurmctld (this machine's root, not the jail).
ctl() { nsenter -t "$(pid_in "$STATE/ctld/slurmctld.pid")" -m -u -n -- "$@"; }

# fs_check ARGS...: slurm-jail-fs-check as slurmd's HealthCheckProgram would
# run it on node1.
fs_check() {
    on_node node1 env SLURMD_NODENAME=node1 "$FS_CHECK" --config /dev/null --jail /mnt/jail \
        --state-dir /run/slurm-jail/health "$@"
}

node1_reason() { ctl scontrol show node node1 | sed -n 's/^ *Reason=\(.*\) \[.*/\1/p'; }
node1_state() { ctl sinfo -h -n node1 -o %T; }

@test "slurm-jail-fs-check: a hung server drains the node with its own reason, and only that drain is resumed" {
    FS_CHECK=${SLURM_JAIL_BUILD_DIR:-$SLURM_JAIL_ROOT/build}/health/slurm-jail-fs-check
    [ -x "$FS_CHECK" ] || fail "$FS_CHECK is not built"
    run fs_check
    assert_success
    assert_output --regexp "^ok: the jail's filesystem answered in [0-9.]+ s \(fuse\.glusterfs "
    local brick
    brick=$(pgrep -f '^/usr/sbin/glusterfsd .*--volfile-id jail\.') || fail "no brick process"
    kill -STOP "$brick"
    local rc=0 out=$BATS_TEST_TMPDIR/fs-check.out t0=$EPOCHREALTIME
    fs_check --timeout 3 >"$out" 2>&1 || rc=$?
    local took
    took=$(elapsed_since "$t0")
    kill -CONT "$brick"
    printf '# shared-fs: slurm-jail-fs-check on a hung server: %s s (--timeout 3)\n' "$took" >&3
    assert_equal "$rc" 1
    run cat "$out"
    assert_output --partial "FAIL: the jail's filesystem did not answer within build_timeout=3 s (fuse.glusterfs"
    run node1_reason
    assert_output --partial "slurm-jail-health: jail: the jail's filesystem did not answer"
    run node1_state
    assert_output --regexp '^drain'
    # Answering again: the check resumes what it drained.
    wait_until 30 fs_check
    run node1_state
    assert_output --regexp '^idle\*?$' # "idle*" until slurmctld's next ping
    # A drain of the admin's own is left alone.
    ctl scontrol update nodename=node1 state=drain reason="admin: maintenance"
    run fs_check
    assert_success
    run node1_reason
    assert_output "admin: maintenance"
    ctl scontrol update nodename=node1 state=resume
}

@test "GPU nodes: a step asks the server only when the kernel no longer holds the jail's ld.so.cache, at most one probe per step" {
    "$LC" down >&2
    "$LC" up --fake-gpu >&2
    run step_ops 1 0
    assert_success
    run step_ops 10 1200 recheck=0
    assert_success
    # A probe asks the server two or three times (the client's entry cache
    # answers the rest): ten steps may ask as often as ten probes at their
    # dearest, the measured cost rounded up to whole requests per probe.
    local per_ten_probes
    per_ten_probes=$(total_of "$output")
    per_ten_probes=$(((per_ten_probes + 9) / 10 * 10))
    run step_ops 10 0
    assert_success
    printf '# shared-fs: GPU node, 10 steps back to back: %s requests (%s)\n' \
        "$(total_of "$output")" "$(echo "$output" | tr '\n' ' ')" >&3
    [ "$(total_of "$output")" -le "$per_ten_probes" ] || fail "more than a probe per step: $output"
    run step_ops 10 1200
    assert_success
    printf '# shared-fs: GPU node, 10 steps 1.2 s apart: %s requests (%s); 10 probes: %s\n' \
        "$(total_of "$output")" "$(echo "$output" | tr '\n' ' ')" "$per_ten_probes" >&3
    [ "$(total_of "$output")" -le "$per_ten_probes" ] || fail "more than a probe per step: $output"
    run ush "srun -w node1 nvidia-smi"
    assert_success
    assert_output --partial "Driver Version: 550.54.15"
}

@test "local-cluster down: no GlusterFS process or mount is left" {
    "$LC" down >&2
    # Killed daemons are reaped by this machine's init a moment later.
    wait_until 10 no_gluster_process
    run findmnt -rn -t fuse.glusterfs
    assert_output ''
}
