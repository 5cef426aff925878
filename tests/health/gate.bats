#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The new-node gate against the REAL private cluster (cluster.bash): the quick
# check and the NCCL check with --gate, on the fake NVML's recorded H200 node
# (one GPU) and the fake all_reduce_perf replaying that node's real sweep. The
# boot id is a file the test writes (--boot-id-file).

load helpers
load cluster

setup_file() {
    cluster_start
}

teardown_file() {
    cluster_stop
}

setup() {
    STATE_DIR=$BATS_TEST_TMPDIR/state
    BOOT_ID=$BATS_TEST_TMPDIR/boot_id
    echo 0b5e2c6a-boot-a >"$BOOT_ID"
    export FAKE_NVML_QUERY=$H200_QUERY
    scontrol update nodename=n1 state=resume 2>/dev/null || true
    wait_state n1 'idle\*?'
}

quick() {
    run gpu_check --node n1 --expected-gpus 1 --kernel-log "$(empty_kmsg)" \
        --state-dir "$STATE_DIR" --boot-id-file "$BOOT_ID" --gate "$@"
}

nccl() {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/10_h200x1_sweep_v2.19.6_real.txt \
        run nccl_check --node n1 --nvml-library "$FAKE_NVML" --state-dir "$STATE_DIR" \
        --boot-id-file "$BOOT_ID" --gate "$@"
}

gate_status() {
    run gpu_check --node n1 --state-dir "$STATE_DIR" --boot-id-file "$BOOT_ID" --gate-status "$@"
}

# Both checks pass on the node as it is now: the gate opens.
open_gate() {
    quick
    assert_success
    nccl
    assert_success
    wait_state n1 'idle\*?'
}

@test "a new node is held until both checks pass; a new boot holds it again" {
    quick
    assert_success
    assert_line 'n1: held by the new-node gate: slurm-jail-health: gate: new node, waiting for the NCCL check'
    run node_info n1
    assert_output 'drained|slurm-jail-health: gate: new node, waiting for the NCCL check'
    nccl
    assert_success
    assert_line --partial 'n1: the quick check and the NCCL check passed since this boot; resuming'
    wait_state n1 'idle\*?'

    echo 7f01d9e4-boot-b >"$BOOT_ID"
    quick # the quick check alone does not lift it
    assert_success
    run node_info n1
    assert_output 'drained|slurm-jail-health: gate: new boot, waiting for the NCCL check'
    quick
    run node_info n1
    assert_output 'drained|slurm-jail-health: gate: new boot, waiting for the NCCL check'
    gate_status
    assert_success
    assert_line 'n1: held (new boot): waiting for the NCCL check'
    assert_line --regexp '^  the NCCL check: passed .* \(boot 0b5e2c6a-boot-a, GPUs \[00000000000000\]\): new boot, must pass again$'
    nccl
    assert_success
    wait_state n1 'idle\*?'
    gate_status --json
    assert_success
    run jq -c '[.held, .missing, .gpu.counts_now, .nccl.counts_now, .gpu_serials]' <<<"$output"
    assert_output '[false,[],true,true,["00000000000000"]]'
}

@test "a new boot before the quick check: the NCCL check alone does not lift it either" {
    open_gate
    echo 7f01d9e4-boot-b >"$BOOT_ID"
    nccl
    assert_success
    run node_info n1
    assert_output 'drained|slurm-jail-health: gate: new boot, waiting for the quick check'
    quick
    assert_success
    wait_state n1 'idle\*?'
}

@test "an admin's drain is never lifted by the gate" {
    scontrol update nodename=n1 state=drain reason="admin: new DIMMs"
    wait_state n1 'drained\*?'
    quick
    assert_success
    nccl
    assert_success
    run node_info n1
    assert_output 'drained|admin: new DIMMs'
    gate_status
    assert_line 'n1: open: both checks passed since this boot with these GPUs'
}

@test "a replaced GPU holds the node again without a reboot" {
    open_gate
    FAKE_NVML_REPLACED_GPU=0 quick
    assert_success
    run node_info n1
    assert_output 'drained|slurm-jail-health: gate: GPUs changed, waiting for the NCCL check'
    FAKE_NVML_REPLACED_GPU=0 nccl
    assert_success
    wait_state n1 'idle\*?'
}

@test "a failing check's own reason wins over the gate's, and the gate holds after it passes" {
    FAKE_NVML_FAULT=ecc FAKE_NVML_FAULT_GPU=0 quick
    assert_failure 1
    run node_info n1
    assert_output --partial 'drained|slurm-jail-health: gpu: GPU 0'
    quick
    assert_success
    run node_info n1
    assert_output 'drained|slurm-jail-health: gate: new node, waiting for the NCCL check'
}

@test "off by default; the records are root-only; a bad boot id file is a clear error" {
    run gpu_check --node n1 --expected-gpus 1 --kernel-log "$(empty_kmsg)" --state-dir "$STATE_DIR"
    assert_success
    run node_info n1
    assert_output --regexp '^idle\*?\|'
    [ ! -e "$STATE_DIR/gate.n1.gpu" ]

    quick
    run stat -c '%a %U' "$STATE_DIR/gate.n1.gpu"
    assert_output '600 root'
    scontrol update nodename=n1 state=resume

    quick --boot-id-file "$BATS_TEST_TMPDIR/missing"
    assert_failure 2
    assert_output --partial "cannot read the boot id from '$BATS_TEST_TMPDIR/missing'"
    assert_output --partial '--boot-id-file'
}

@test "--help and the man pages name the gate's options" {
    run "$HEALTH_BIN/slurm-jail-gpu-check" --help
    assert_output --partial '--gate-status'
    assert_output --partial '--boot-id-file'
    run "$HEALTH_BIN/slurm-jail-nccl-check" --help
    assert_output --partial '--gate-dir'
    run man -l "$SLURM_JAIL_ROOT/health/man/slurm-jail-gpu-check.8"
    assert_output --partial 'NEW NODES'
    assert_output --partial '--gate-status'
    run man -l "$SLURM_JAIL_ROOT/health/man/slurm-jail-nccl-check.8"
    assert_output --partial '--boot-id-file'
}
