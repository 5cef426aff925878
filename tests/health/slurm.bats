#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Draining and resuming against a REAL munged + slurmctld + slurmd started
# here (ports 17817/17818, everything under a temp dir). States are read back
# with sinfo.

load helpers
load cluster

setup_file() {
    # n1 declares 8 GPUs in Slurm (Gres=gpu:h100:8). slurmd only checks that
    # each gres File exists, so harmless character devices stand in for
    # /dev/nvidia0..7.
    local dir dev
    dir=$(mktemp -d /tmp/sjh-cluster.XXXXXX)
    mkdir "$dir/etc" # gres.conf goes next to slurm.conf
    echo AutoDetect=off >"$dir/etc/gres.conf"
    for dev in null zero full random urandom tty ptmx kmsg; do
        echo "Name=gpu Type=h100 File=/dev/$dev" >>"$dir/etc/gres.conf"
    done
    export SJH_EXTRA_CONF=GresTypes=gpu SJH_N1_EXTRA=Gres=gpu:h100:8
    cluster_start "$dir"
}

teardown_file() {
    cluster_stop
}

setup() {
    STATE_DIR=$BATS_TEST_TMPDIR/state
    # every test starts from a resumed n1 ("idle*" until slurmctld's next
    # ping, about 10 s, after a resume)
    scontrol update nodename=n1 state=resume 2>/dev/null || true
    wait_state n1 'idle\*?'
}

check() {
    gpu_check --node n1 --expected-gpus 8 --kernel-log "$(empty_kmsg)" --state-dir "$STATE_DIR" "$@"
}

@test "a failing quick check drains the node with our prefix" {
    FAKE_NVML_FAULT=ecc run check
    assert_failure 1
    assert_line 'DRAIN GPU 3 (00000000:48:00.0): 2 volatile uncorrectable ECC errors'
    assert_line --partial 'n1: check failed; draining: slurm-jail-health: gpu: GPU 3'
    run node_info n1
    assert_output 'drained|slurm-jail-health: gpu: GPU 3 (00000000:48:00.0): 2 volatile uncorrectable ECC errors'
}

@test "a passing check resumes a node we drained" {
    scontrol update nodename=n1 state=drain reason="slurm-jail-health: gpu: GPU 3: lost"
    wait_state n1 drained
    run check
    assert_success
    assert_line --partial 'n1: check passed; resuming'
    wait_state n1 'idle\*?'
}

@test "an admin-drained node is never resumed nor re-labelled" {
    scontrol update nodename=n1 state=drain reason="admin: bad fan"
    wait_state n1 drained
    run check
    assert_success
    assert_line --partial 'drained by someone else'
    run node_info n1
    assert_output 'drained|admin: bad fan'
    FAKE_NVML_FAULT=nvlink run check
    assert_failure 1
    run node_info n1
    assert_output 'drained|admin: bad fan'
}

@test "the quick check does not resume a node the NCCL check drained, the NCCL check does" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt \
        run nccl_check --node n1 --gpu-model A100 --gpus 4 --state-dir "$STATE_DIR"
    assert_failure 1
    run node_info n1
    assert_output 'drained|slurm-jail-health: nccl: busbw 5.20 GB/s at 8 GiB < 200 GB/s expected for A100x4'
    run check
    assert_success
    run node_info n1
    assert_output --partial 'drained|slurm-jail-health: nccl:'
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt \
        run nccl_check --node n1 --gpu-model A100 --gpus 4 --state-dir "$STATE_DIR"
    assert_success
    wait_state n1 'idle\*?'
}

@test "a scontrol planted first in PATH never runs; the real one drains; the counter is per node" {
    local planted=$BATS_TEST_TMPDIR/planted
    mkdir -p "$planted"
    printf '#!/bin/sh\ntouch %s/ran\nexit 0\n' "$planted" >"$planted/scontrol"
    chmod 0755 "$planted/scontrol"
    PATH="$planted:$PATH" FAKE_NCCL_FIXTURE=$FIXTURES/nccl/05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt \
        run nccl_check --node n1 --gpu-model A100 --gpus 4 --state-dir "$STATE_DIR"
    assert_failure 1
    [ ! -e "$planted/ran" ]
    run node_info n1
    assert_output 'drained|slurm-jail-health: nccl: busbw 5.20 GB/s at 8 GiB < 200 GB/s expected for A100x4'
    run jq -c . "$STATE_DIR/nccl-check.n1.failures"
    assert_output '{"check":"nccl","consecutive_failures":1}'
}

@test "--drain-after counts consecutive failures in a state file" {
    FAKE_NVML_FAULT=ecc run check --drain-after 2
    assert_failure 1
    assert_line --partial '(1 of 2 consecutive failures before draining)'
    run node_info n1
    assert_output 'idle|none'
    run jq -e '.consecutive_failures == 1' "$STATE_DIR/gpu-check.failures"
    assert_success
    FAKE_NVML_FAULT=ecc run check --drain-after 2
    assert_failure 1
    run node_info n1
    assert_output --partial 'drained|slurm-jail-health: gpu:'
    run check --drain-after 2
    assert_success
    run jq -e '.consecutive_failures == 0' "$STATE_DIR/gpu-check.failures"
    assert_success
    wait_state n1 'idle\*?'
}

@test "--dry-run prints the scontrol command and changes nothing" {
    FAKE_NVML_FAULT=ecc run check --dry-run
    assert_failure 1
    assert_line 'dry-run: would run: scontrol update nodename=n1 state=drain reason="slurm-jail-health: gpu: GPU 3 (00000000:48:00.0): 2 volatile uncorrectable ECC errors"'
    run node_info n1
    assert_output 'idle|none'
    [ ! -e "$STATE_DIR/gpu-check.failures" ]
}

@test "--json keeps stdout machine-readable while draining" {
    FAKE_NVML_FAULT=pcie_width run check --json
    assert_failure 1
    run sh -c "FAKE_NVML_FAULT=ecc $HEALTH_BIN/slurm-jail-gpu-check --config /dev/null --nvml-library $FAKE_NVML --node n1 --expected-gpus 8 --kernel-log /dev/null --state-dir $STATE_DIR --json 2>/dev/null | jq -r .verdict"
    assert_output 'fail'
}

@test "the expected GPU count comes from the node's Gres when not configured" {
    run gpu_check --node n1 --kernel-log "$(empty_kmsg)" --state-dir "$STATE_DIR" --no-drain
    assert_success
    FAKE_NVML_FAULT=missing_gpu run gpu_check --node n1 --kernel-log "$(empty_kmsg)" \
        --state-dir "$STATE_DIR" --no-drain
    assert_failure 1
    assert_output 'DRAIN 7 GPUs visible, 8 expected'
    run gpu_check --node n2 --kernel-log "$(empty_kmsg)" --state-dir "$STATE_DIR" --no-drain
    assert_failure 2
    assert_output "slurm-jail-gpu-check: error: node n2 has no gpu in its Gres (''): set Gres=gpu:N for it in slurm.conf or pass --expected-gpus"
}

@test "the driver submits one exclusive job per eligible node and skips the others" {
    wait_state n1 idle # responding again, so eligible
    run nccl_submit --dry-run --check-command /opt/check -- --threshold A100x4=200
    assert_success
    assert_line "dry-run: would submit for n1: sbatch --exclusive --nodes=1 --nodelist=n1 --job-name=slurm-jail-nccl-check --wrap=exec '/opt/check' --node 'n1' '--threshold' 'A100x4=200'"
    assert_line --regexp '^skip n2: state (unknown|down)\*?$'
    assert_line 'would submit 1 job(s), skipped 1 node(s)'
    scontrol update nodename=n1 state=drain reason="admin: bad fan"
    wait_state n1 drained
    run nccl_submit --dry-run
    assert_success
    assert_line 'skip n1: state drained'
    assert_line 'would submit 0 job(s), skipped 2 node(s)'
}

@test "a submitted job runs the NCCL check on its node and drains it" {
    wait_state n1 idle # responding again, so eligible
    run nccl_submit --check-command "$HEALTH_BIN/slurm-jail-nccl-check" \
        --sbatch-arg="--output=$BATS_TEST_TMPDIR/job-%j.out" -- \
        --config /dev/null --binary "$FAKE_NCCL" --gpu-model A100 --gpus 4 \
        --state-dir "$STATE_DIR" \
        --env "FAKE_NCCL_FIXTURE=$FIXTURES/nccl/05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt"
    assert_success
    assert_line --regexp '^n1: Submitted batch job [0-9]+$'
    for _ in $(seq 1 100); do
        [ -z "$(squeue -h)" ] && break
        sleep 0.2
    done
    run cat "$BATS_TEST_TMPDIR"/job-*.out
    assert_line 'FAIL n1: busbw 5.20 GB/s at 8 GiB < 200 GB/s expected for A100x4'
    run node_info n1
    assert_output 'drained|slurm-jail-health: nccl: busbw 5.20 GB/s at 8 GiB < 200 GB/s expected for A100x4'
}

@test "scontrol missing is a clear error and changes nothing" {
    FAKE_NVML_FAULT=ecc run check --scontrol /nonexistent/scontrol
    assert_failure 2
    assert_line --partial "cannot run '/nonexistent/scontrol': No such file or directory; install slurm-client"
    [ ! -e "$STATE_DIR/gpu-check.failures" ]
}

@test "an unreachable slurmctld is a clear error and changes nothing (runs last: stops slurmctld)" {
    kill "$(cat "$SJH_CLUSTER/slurmctld.pid")"
    for _ in $(seq 1 50); do
        kill -0 "$(cat "$SJH_CLUSTER/slurmctld.pid")" 2>/dev/null || break
        sleep 0.1
    done
    FAKE_NVML_FAULT=ecc run check
    assert_failure 2
    assert_line --partial 'slurm-jail-gpu-check: error: cannot reach slurmctld'
    assert_line --partial 'nothing was changed'
    [ ! -e "$STATE_DIR/gpu-check.failures" ]
    run nccl_submit --dry-run
    assert_failure 2
    assert_output --partial 'cannot reach slurmctld'
}
