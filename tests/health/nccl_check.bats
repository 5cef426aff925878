#!/usr/bin/env bats
# The NCCL check's runner with a fake all_reduce_perf that replays real
# outputs from ../shared/fixtures/nccl (no Slurm here: --no-drain).

load helpers

nccl() {
    run nccl_check --no-drain --node n1 "$@"
}

@test "a healthy output passes; the busbw at the largest size is compared to the threshold" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt \
        nccl --gpu-model 'NVIDIA A100-SXM4-80GB' --gpus 4
    assert_success
    assert_line 'PASS n1: NCCL all_reduce check passed'
    assert_line '  busbw 234.74 GB/s at 8 GiB >= 200 GB/s expected for A100x4'
}

@test "low bandwidth fails and says what was measured against what was expected" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt \
        nccl --gpu-model 'NVIDIA A100-SXM4-80GB' --gpus 4
    assert_failure 1
    assert_line 'FAIL n1: busbw 5.20 GB/s at 8 GiB < 200 GB/s expected for A100x4'
}

@test "thresholds from the command line override the built-in table" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/02_healthy_2gpu_nvlink_a40.txt \
        nccl --gpu-model 'NVIDIA A40' --gpus 2 --threshold A40x2=50
    assert_failure 1
    assert_line 'FAIL n1: busbw 47.49 GB/s at 8 GiB < 50 GB/s expected for A40x2'
}

@test "mpirun-tagged output with stderr noise is judged like any other" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/06_full_header_v2.18_mpirun_tagged_socket_lowbw.txt \
        nccl --gpu-model 'NVIDIA GeForce RTX 5090' --gpus 2 --threshold 5090x2=1
    assert_success
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/01_healthy_2node_mpirun_tagged_aws_batch.txt \
        nccl --gpu-model 'NVIDIA H100 80GB HBM3' --gpus 16 --threshold H100x16=400 --json
    assert_success
    echo "$output" | jq -e '.verdict == "pass" and .busbw_gbps == 483.35 and .size_bytes == 17179869184'
    echo "$output" | jq -e '.avg_busbw_gbps == 156.742 and .rows == 32 and .threshold_gbps == 400'
}

@test "a non-zero exit fails even with good numbers" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt FAKE_NCCL_EXIT=3 \
        nccl --gpu-model A100 --gpus 4
    assert_failure 1
    assert_line 'FAIL n1: all_reduce_perf exited with code 3 (NCCL error)'
}

@test "the timeout kills a run that takes too long" {
    local start end
    start=$(now_ms)
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt FAKE_NCCL_DELAY=30 \
        nccl --gpu-model A100 --gpus 4 --timeout 1
    end=$(now_ms)
    assert_failure 1
    assert_line 'FAIL n1: all_reduce_perf did not finish within 1 s'
    [ $((end - start)) -lt 10000 ]
    run pgrep -f 'fake_all_reduce_perf'
    assert_failure
}

@test "arguments, {gpus} and extra environment reach all_reduce_perf" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt \
        FAKE_NCCL_ARGS=$BATS_TEST_TMPDIR/args nccl --gpu-model A100 --gpus 4
    assert_success
    run cat "$BATS_TEST_TMPDIR/args"
    assert_output '-b 8G -e 8G -f 2 -g 4'
    nccl --gpu-model A100 --gpus 4 --args '-b 1G -e 8G -g {gpus}' \
        --env "FAKE_NCCL_FIXTURE=$FIXTURES/nccl/05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt" \
        --env "FAKE_NCCL_ARGS=$BATS_TEST_TMPDIR/args2"
    assert_failure 1
    run cat "$BATS_TEST_TMPDIR/args2"
    assert_output '-b 1G -e 8G -g 4'
}

@test "the GPU model and count come from NVML when not given" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt FAKE_NVML_GPUS=4 \
        nccl --nvml-library "$FAKE_NVML" --threshold H100x4=200 --json
    assert_success
    echo "$output" | jq -e '.gpu_model == "NVIDIA H100 80GB HBM3" and .gpus == 4'
}

@test "the real one-H200 sweep passes on correctness alone; its bandwidth is not judged" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/10_h200x1_sweep_v2.19.6_real.txt FAKE_NVML_QUERY=$H200_QUERY \
        nccl --nvml-library "$FAKE_NVML"
    assert_success
    assert_line 'PASS n1: NCCL all_reduce check passed'
    assert_line '  one GPU: bus bandwidth is 0 by definition and is not judged'
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/10_h200x1_sweep_v2.19.6_real.txt FAKE_NVML_QUERY=$H200_QUERY \
        nccl --nvml-library "$FAKE_NVML" --json
    assert_success
    echo "$output" | jq -e '.gpu_model == "NVIDIA H200" and .gpus == 1 and .threshold_gbps == null'
    echo "$output" | jq -e '.busbw_gbps == 0 and .size_bytes == 8589934592 and .rows == 31'
    # the same run with an NCCL error still fails
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/10_h200x1_sweep_v2.19.6_real.txt FAKE_NCCL_EXIT=3 \
        nccl --gpu-model 'NVIDIA H200' --gpus 1
    assert_failure 1
    assert_line 'FAIL n1: all_reduce_perf exited with code 3 (NCCL error)'
}

@test "missing threshold, missing binary and bad thresholds are clear errors" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/02_healthy_2gpu_nvlink_a40.txt \
        nccl --gpu-model 'Tesla V100' --gpus 8
    assert_failure 2
    assert_output "slurm-jail-nccl-check: error: no bandwidth threshold for 'Tesla V100' x8: add one, e.g. --threshold MODELx8=GBPS (threshold = ... in the [nccl-check] config section)"
    run "$HEALTH_BIN/slurm-jail-nccl-check" --config /dev/null --no-drain --gpu-model A100 \
        --gpus 4 --binary /nonexistent/all_reduce_perf
    assert_failure 2
    assert_output --partial "cannot run '/nonexistent/all_reduce_perf': No such file or directory; install nccl-tests or pass --binary PATH"
    nccl --gpu-model A100 --gpus 4 --threshold A100x4
    assert_failure 2
    assert_output --partial "bad threshold 'A100x4': no '='"
}

@test "--help and the man page exist" {
    run "$HEALTH_BIN/slurm-jail-nccl-check" --help
    assert_success
    assert_output --partial '--threshold'
    run man -l "$SLURM_JAIL_ROOT/health/man/slurm-jail-nccl-check.8"
    assert_success
    assert_output --partial 'all_reduce_perf'
    run "$HEALTH_BIN/slurm-jail-nccl-submit" --help
    assert_success
    run man -l "$SLURM_JAIL_ROOT/health/man/slurm-jail-nccl-submit.8"
    assert_success
    assert_output --partial 'exclusive'
}

@test "the driver reads [nccl-submit] from the config file (sinfo replaced by a script)" {
    local conf=$BATS_TEST_TMPDIR/health.conf sinfo=$BATS_TEST_TMPDIR/sinfo
    printf '#!/bin/sh\nprintf "n1|idle\\nn2|drained\\nn3|mixed\\nn1|idle\\nn4|idle*\\n"\n' >"$sinfo"
    chmod +x "$sinfo"
    printf '[nccl-submit]\npartition = gpu\nsbatch-arg = --time=30\ncheck-command = /usr/sbin/slurm-jail-nccl-check\n' >"$conf"
    run "$HEALTH_BIN/slurm-jail-nccl-submit" --config "$conf" --sinfo "$sinfo" --dry-run
    assert_success
    assert_line "dry-run: would submit for n1: sbatch --exclusive --nodes=1 --nodelist=n1 --job-name=slurm-jail-nccl-check --partition=gpu --time=30 --wrap=exec '/usr/sbin/slurm-jail-nccl-check' --node 'n1'"
    assert_line --partial 'dry-run: would submit for n3:'
    assert_line 'skip n2: state drained'
    assert_line 'skip n4: state idle*'
    assert_line 'would submit 2 job(s), skipped 2 node(s)'
}
