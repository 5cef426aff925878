#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The new-node gate against the REAL private cluster (cluster.bash): the quick
# check and the NCCL check with --gate, on the fake NVML's recorded H200 node
# (one GPU) and the fake all_reduce_perf replaying that node's real sweep. The
# boot id is a file the test writes (--boot-id-file). The gate holds n1 with
# its reservation, slurm-jail-gate-n1; a test user's jobs show that users do
# not get the node while it is held (SJH_GATE_USER=NAME:UID, made here when
# missing and removed at the end).

load helpers
load cluster

RESV=slurm-jail-gate-n1
GATE_USER=${SJH_GATE_USER:-sjhgate:5302}
USER_NAME=${GATE_USER%%:*}
USER_UID=${GATE_USER##*:}

setup_file() {
    if ! getent passwd "$USER_NAME" >/dev/null; then
        useradd -u "$USER_UID" -U -M -d / -s /bin/sh "$USER_NAME"
        export SJH_GATE_MADE_USER=1
    fi
    cluster_start
}

teardown_file() {
    cluster_stop
    if [ "${SJH_GATE_MADE_USER:-0}" = 1 ]; then
        userdel "$USER_NAME" || echo "could not remove the test user $USER_NAME" >&2
        if getent group "$USER_NAME" >/dev/null; then groupdel "$USER_NAME"; fi
    fi
}

setup() {
    STATE_DIR=$BATS_TEST_TMPDIR/state
    BOOT_ID=$BATS_TEST_TMPDIR/boot_id
    echo 0b5e2c6a-boot-a >"$BOOT_ID"
    export FAKE_NVML_QUERY=$H200_QUERY
    # The NCCL check's arguments but --node (nccl-submit adds it).
    NCCL_ARGS=(--nvml-library "$FAKE_NVML" --state-dir "$STATE_DIR" --boot-id-file "$BOOT_ID" --gate)
    squeue -h -o %i | xargs -r scancel
    poll_until 20 0.2 no_jobs
    scontrol delete reservation "$RESV" 2>/dev/null || true
    scontrol update nodename=n1 state=resume 2>/dev/null || true
    wait_state n1 'idle\*?'
}

no_jobs() { [ -z "$(squeue -h)" ]; }

job_gone() { [ -z "$(squeue -h -j "$1" 2>/dev/null)" ]; }

waits_for_node() { squeue -h -j "$1" -o '%T|%r' | grep -q '^PENDING|ReqNodeNotAvail'; }

quick() {
    run gpu_check --node n1 --expected-gpus 1 --kernel-log "$(empty_kmsg)" \
        --state-dir "$STATE_DIR" --boot-id-file "$BOOT_ID" --gate "$@"
}

nccl() {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/10_h200x1_sweep_v2.19.6_real.txt \
        run nccl_check --node n1 "${NCCL_ARGS[@]}"
}

gate_status() {
    run gpu_check --node n1 --state-dir "$STATE_DIR" --boot-id-file "$BOOT_ID" --gate-status "$@"
}

# "Users|Nodes|Flags|State" of the gate's reservation, or nothing.
resv_info() {
    scontrol show reservation -o "$RESV" 2>/dev/null |
        sed -n 's/.* Nodes=\([^ ]*\) .* Flags=\([^ ]*\) .* Users=\([^ ]*\) .* State=\([^ ]*\) .*/\3|\1|\2|\4/p'
}

assert_held() {
    run resv_info
    assert_output 'root|n1|MAINT,IGNORE_JOBS,SPEC_NODES|ACTIVE'
}

resv_gone() { ! scontrol show reservation -o "$RESV" 2>/dev/null | grep -q "ReservationName=$RESV"; }

# Both checks pass on the node as it is now: the gate opens.
open_gate() {
    quick
    assert_success
    nccl
    assert_success
    poll_until 20 0.2 resv_gone
}

@test "a new node is held by a reservation until both checks pass; a new boot holds it again" {
    quick
    assert_success
    assert_line "n1: held by the new-node gate (slurm-jail-health: gate: new node, waiting for the NCCL check) with reservation $RESV: jobs that do not name it do not start there"
    assert_held
    run node_info n1
    assert_output --regexp '^(idle|maint)\|none$' # not drained: held by the reservation
    nccl
    assert_success
    assert_line "n1: the quick check and the NCCL check passed since this boot; releasing reservation $RESV"
    run resv_info
    assert_output ''

    echo 7f01d9e4-boot-b >"$BOOT_ID"
    quick # the quick check alone does not lift it
    assert_success
    assert_held
    quick # every HealthCheckInterval: nothing more to do
    assert_success
    assert_line "n1: still held by the new-node gate (slurm-jail-health: gate: new boot, waiting for the NCCL check) with reservation $RESV"
    run scontrol show reservation -o
    assert_equal "$(grep -c "$RESV" <<<"$output")" 1
    gate_status
    assert_success
    assert_line 'n1: held (new boot): waiting for the NCCL check'
    assert_line --regexp '^  the NCCL check: passed .* \(boot 0b5e2c6a-boot-a, GPUs \[00000000000000\]\): new boot, must pass again$'
    assert_line "  in Slurm: held by reservation $RESV (active, Users=root)"
    nccl
    assert_success
    gate_status --json
    assert_success
    run jq -c '[.held, .missing, .gpu.counts_now, .nccl.counts_now, .reservation, .in_slurm]' <<<"$output"
    assert_output '[false,[],true,true,null,"no reservation"]'
}

@test "a user's job waits while the node is held; nccl-submit's check runs in the reservation and releases it" {
    quick
    assert_held
    run runuser -u "$USER_NAME" -- sbatch --parsable --nodelist=n1 --chdir=/ --output=/dev/null --wrap true
    assert_success
    local user_job=$output
    run runuser -u "$USER_NAME" -- sbatch --reservation="$RESV" --nodelist=n1 --chdir=/ --output=/dev/null --wrap true
    assert_failure
    assert_output --partial 'Access denied to requested reservation'
    poll_until 10 0.2 waits_for_node "$user_job"
    run squeue -h -j "$user_job" -o '%T|%r'
    assert_output --regexp '^PENDING\|ReqNodeNotAvail'

    local submit_args
    submit_args=(--check-command "$HEALTH_BIN/slurm-jail-nccl-check"
        "--sbatch-arg=--export=ALL,FAKE_NVML_QUERY=$H200_QUERY"
        "--sbatch-arg=--output=$BATS_TEST_TMPDIR/check-%j.out" --
        --config /dev/null --binary "$FAKE_NCCL" "${NCCL_ARGS[@]}"
        --env "FAKE_NCCL_FIXTURE=$FIXTURES/nccl/10_h200x1_sweep_v2.19.6_real.txt")
    run nccl_submit --dry-run "${submit_args[@]}"
    assert_success
    assert_line --regexp "^dry-run: would submit for n1: sbatch --exclusive --nodes=1 --nodelist=n1 --job-name=slurm-jail-nccl-check --reservation=$RESV "
    run nccl_submit "${submit_args[@]}"
    assert_success
    assert_line --regexp '^n1: Submitted batch job [0-9]+$'
    local check_job
    check_job=$(sed -n 's/^n1: Submitted batch job //p' <<<"$output")
    poll_until 30 0.2 job_gone "$check_job"
    run cat "$BATS_TEST_TMPDIR"/check-*.out
    assert_line --partial 'PASS n1'
    assert_line "reservation $RESV ended now; Slurm removes it once the job in it ends"
    # Slurm purges an ended reservation on its own schedule (about 30 s here);
    # the next quick check removes it at once, and the user's job starts.
    quick
    assert_success
    poll_until 5 0.2 resv_gone
    poll_until 20 0.2 no_jobs
    run scontrol show job "$user_job"
    assert_output --partial 'JobState=COMPLETED'
    assert_output --partial 'NodeList=n1'
}

@test "an admin's drain is never lifted by the gate" {
    scontrol update nodename=n1 state=drain reason="admin: new DIMMs"
    wait_state n1 'drained\*?'
    quick
    assert_success
    assert_held
    run nccl_submit --dry-run
    assert_line 'skip n1: state drained'
    nccl
    assert_success
    run node_info n1
    assert_output 'drained|admin: new DIMMs'
    run resv_info
    assert_output ''
    gate_status
    assert_line 'n1: open: both checks passed since this boot with these GPUs'
}

@test "a replaced GPU holds the node again without a reboot" {
    open_gate
    FAKE_NVML_REPLACED_GPU=0 quick
    assert_success
    assert_held
    FAKE_NVML_REPLACED_GPU=0 nccl
    assert_success
    run resv_info
    assert_output ''
}

@test "a failing check's own reason wins; its resume leaves the node held by the reservation" {
    FAKE_NVML_FAULT=ecc FAKE_NVML_FAULT_GPU=0 quick
    assert_failure 1
    run node_info n1
    assert_output --partial 'drained|slurm-jail-health: gpu: GPU 0'
    assert_held
    quick
    assert_success
    run node_info n1
    assert_output --regexp '^(idle|maint)\|none$'
    assert_held
}

@test "a node the gate drained before it held by reservation is resumed into the reservation" {
    scontrol update nodename=n1 state=drain \
        reason="slurm-jail-health: gate: new node, waiting for the quick check and the NCCL check"
    quick
    assert_success
    assert_line --partial "n1: resuming the gate's drain"
    assert_held
    run node_info n1
    assert_output --regexp '^(idle|maint)\|none$'
}

@test "a reservation of someone else under the gate's name is refused, and nothing is changed" {
    scontrol create reservation ReservationName="$RESV" Nodes=n1 Users="$USER_NAME" \
        StartTime=now Duration=10 Flags=MAINT
    quick
    assert_failure 2
    assert_output --partial "cannot hold n1: reservation $RESV exists and is not the gate's (Nodes=n1 Users=$USER_NAME"
    assert_output --partial "scontrol delete reservation $RESV"
    [ ! -e "$STATE_DIR/gate.n1.gpu" ]
    run resv_info
    assert_output --partial "$USER_NAME|n1|"
    run nccl_submit --dry-run
    refute_output --partial -- '--reservation='
}

@test "off by default; --dry-run changes nothing; the records are root-only; bad input is a clear error" {
    run gpu_check --node n1 --expected-gpus 1 --kernel-log "$(empty_kmsg)" --state-dir "$STATE_DIR"
    assert_success
    run node_info n1
    assert_output --regexp '^idle\*?\|'
    [ ! -e "$STATE_DIR/gate.n1.gpu" ]
    run resv_info
    assert_output ''

    quick --dry-run
    assert_success
    assert_line "dry-run: would run: scontrol create reservation ReservationName=$RESV Nodes=n1 Users=root StartTime=now Duration=infinite Flags=MAINT,IGNORE_JOBS"
    run resv_info
    assert_output ''

    quick
    run stat -c '%a %U' "$STATE_DIR/gate.n1.gpu"
    assert_output '600 root'

    quick --boot-id-file "$BATS_TEST_TMPDIR/missing"
    assert_failure 2
    assert_output --partial "cannot read the boot id from '$BATS_TEST_TMPDIR/missing'"
    assert_output --partial '--boot-id-file'
    gate_status --scontrol /nonexistent/scontrol # Slurm not asked: the records still print
    assert_success
    assert_line 'n1: held (new node): waiting for the NCCL check'
    assert_line --partial "  in Slurm: unknown: cannot run '/nonexistent/scontrol'"
    quick --node n9 # not in the cluster
    assert_failure 2
    assert_output --partial 'n9'
    run scontrol show reservation -o slurm-jail-gate-n9
    refute_output --partial 'ReservationName='
}

@test "--help and the man pages name the gate's options" {
    run "$HEALTH_BIN/slurm-jail-gpu-check" --help
    assert_output --partial '--gate-status'
    assert_output --partial '--boot-id-file'
    run "$HEALTH_BIN/slurm-jail-nccl-check" --help
    assert_output --partial '--gate-dir'
    run "$HEALTH_BIN/slurm-jail-nccl-submit" --help
    assert_output --partial 'reservation'
    run man -l "$SLURM_JAIL_ROOT/health/man/slurm-jail-gpu-check.8"
    assert_output --partial 'NEW NODES'
    # the source: man may hyphenate long words at a line's end
    grep -qF 'ReservationName=slurm\-jail\-gate\-NODE' "$SLURM_JAIL_ROOT/health/man/slurm-jail-gpu-check.8"
    grep -qF '\-\-reservation=slurm\-jail\-gate\-NODE' "$SLURM_JAIL_ROOT/health/man/slurm-jail-nccl-submit.8"
    grep -qF '\-\-gate\-status' "$SLURM_JAIL_ROOT/health/man/slurm-jail-gpu-check.8"
    grep -qF '\-\-boot\-id\-file' "$SLURM_JAIL_ROOT/health/man/slurm-jail-nccl-check.8"
}

@test "slurmctld down: a clear error, and nothing is changed (runs last: stops slurmctld)" {
    quick
    assert_held
    kill -KILL "$(cat "$SJH_CLUSTER/slurmctld.pid")" # the cluster goes at the end anyway
    poll_until 5 0.1 process_gone "$(cat "$SJH_CLUSTER/slurmctld.pid")"
    rm -f "$STATE_DIR/gate.n1.gpu"
    quick --budget 4 # scontrol's own retries would take 10 s and more
    assert_failure 2
    assert_output --partial 'slurmctld'
    assert_output --partial 'nothing was changed'
    [ ! -e "$STATE_DIR/gate.n1.gpu" ]
}
