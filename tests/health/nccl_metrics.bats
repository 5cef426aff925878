#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# slurm-jail-nccl-check --metrics-file with the fake all_reduce_perf that
# replays real outputs from ../shared/fixtures/nccl (no Slurm: --no-drain).

load helpers

@test "--metrics-file holds the verdict, busbw, threshold, duration and time, atomically" {
    local m=$BATS_TEST_TMPDIR/nccl.prom labels
    labels='{node="n1",model="NVIDIA A100-SXM4-80GB",gpus="4",nodes="1"}'
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt \
        run nccl_check --no-drain --node n1 --gpu-model 'NVIDIA A100-SXM4-80GB' --gpus 4 \
        --metrics-file "$m"
    assert_success
    run grep -F "slurm_jail_nccl_check_ok$labels 1" "$m"
    assert_success
    run grep -F "slurm_jail_nccl_check_busbw_gbps$labels 234.74" "$m"
    assert_success
    run grep -F "slurm_jail_nccl_check_threshold_gbps$labels 200" "$m"
    assert_success
    run grep -E '^slurm_jail_nccl_check_duration_seconds\{.*\} [0-9.]+$' "$m"
    assert_success
    run grep -E '^slurm_jail_nccl_check_last_run_timestamp_seconds\{.*\} [0-9]{10}\.[0-9]{3}$' "$m"
    assert_success
    run ls -A "$BATS_TEST_TMPDIR"
    refute_output --partial '.tmp.'
}

@test "a failing run writes ok 0 with what it measured" {
    local m=$BATS_TEST_TMPDIR/nccl.prom
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt \
        run nccl_check --no-drain --node n1 --gpu-model 'NVIDIA A100-SXM4-80GB' --gpus 4 \
        --metrics-file "$m"
    assert_failure 1
    run grep -F 'slurm_jail_nccl_check_ok{node="n1",model="NVIDIA A100-SXM4-80GB",gpus="4",nodes="1"} 0' "$m"
    assert_success
    run grep -F 'slurm_jail_nccl_check_busbw_gbps{node="n1",model="NVIDIA A100-SXM4-80GB",gpus="4",nodes="1"} 5.2' "$m"
    assert_success
}
