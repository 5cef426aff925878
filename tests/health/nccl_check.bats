#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The NCCL check's runner with a fake all_reduce_perf that replays real
# outputs from ../shared/fixtures/nccl (no Slurm here: --no-drain).

load helpers
load ../lib/fake_scontrol

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

@test "--nodes picks the MODELxGPUSxNODES threshold; a node count override wins" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/01_healthy_2node_mpirun_tagged_aws_batch.txt \
        nccl --gpu-model 'NVIDIA H100 80GB HBM3' --gpus 8 --nodes 2 --json
    assert_success
    echo "$output" | jq -e '.verdict == "pass" and .gpus == 8 and .nodes == 2 and .threshold_gbps == 250'
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/01_healthy_2node_mpirun_tagged_aws_batch.txt \
        nccl --gpu-model 'NVIDIA H100 80GB HBM3' --gpus 8 --nodes 4 --threshold H100x8x4=490
    assert_failure 1
    assert_line 'FAIL n1: busbw 483.35 GB/s at 16 GiB < 490 GB/s expected for H100x8x4'
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/01_healthy_2node_mpirun_tagged_aws_batch.txt \
        nccl --gpu-model 'Tesla V100' --gpus 8 --nodes 2
    assert_failure 2
    assert_output "slurm-jail-nccl-check: error: no bandwidth threshold for 'Tesla V100' x8 on 2 nodes: add one, e.g. --threshold MODELx8x2=GBPS (threshold = ... in the [nccl-check] config section)"
    nccl --gpu-model 'NVIDIA H100 80GB HBM3' --gpus 8 --nodes 2 --threshold H100x8x0=250
    assert_failure 2
    assert_output --partial "bad threshold 'H100x8x0=250': node count '0' is not a positive integer (write MODELxGPUS=GBPS for one node or MODELxGPUSxNODES=GBPS across nodes"
}

@test "a non-zero exit fails even with good numbers" {
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt FAKE_NCCL_EXIT=3 \
        nccl --gpu-model A100 --gpus 4
    assert_failure 1
    assert_line 'FAIL n1: all_reduce_perf exited with code 3 (NCCL error)'
}

@test "the timeout kills a run that takes too long" {
    local start end
    # A copy of its own, so that the check below sees this run's process
    # alone (other suites run the fake beside this one).
    install -m 0755 "$FAKE_NCCL" "$BATS_TEST_TMPDIR/fake_all_reduce_perf"
    start=$(now_ms)
    FAKE_NCCL=$BATS_TEST_TMPDIR/fake_all_reduce_perf FAKE_NCCL_DELAY=30 \
        FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt \
        nccl --gpu-model A100 --gpus 4 --timeout 1
    end=$(now_ms)
    assert_failure 1
    assert_line 'FAIL n1: all_reduce_perf did not finish within 1 s'
    [ $((end - start)) -lt 10000 ]
    run pgrep -f "$BATS_TEST_TMPDIR/fake_all_reduce_perf"
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

@test "all_reduce_perf gets a clean environment: a fixed PATH, CUDA_VISIBLE_DEVICES and --env" {
    local env_file=$BATS_TEST_TMPDIR/env
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt FAKE_NCCL_ENV=$env_file \
        PATH="$BATS_TEST_TMPDIR/bin:$PATH" LD_LIBRARY_PATH=$BATS_TEST_TMPDIR/lib \
        SJH_CALLERS_OWN=1 CUDA_VISIBLE_DEVICES=0,1,2,3 nccl --gpu-model A100 --gpus 4 \
        --env NCCL_DEBUG=WARN
    assert_success
    # (the fake's /bin/sh adds PWD itself)
    run bash -c "grep -v '^PWD=' '$env_file' | sort"
    assert_output "CUDA_VISIBLE_DEVICES=0,1,2,3
FAKE_NCCL_ENV=$env_file
FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt
NCCL_DEBUG=WARN
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    nccl --gpu-model A100 --gpus 4 --env NCCL_DEBUG
    assert_failure 2
    assert_output "slurm-jail-nccl-check: error: bad environment entry 'NCCL_DEBUG': write KEY=VALUE"
}

@test "an all_reduce_perf another user could change is refused and never runs" {
    local dir=$BATS_TEST_TMPDIR/bin ran=$BATS_TEST_TMPDIR/ran
    mkdir -p "$dir"
    cp "$FAKE_NCCL" "$dir/all_reduce_perf"
    chown 65534 "$dir"
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt FAKE_NCCL_ARGS=$ran \
        nccl --gpu-model A100 --gpus 4 --binary "$dir/all_reduce_perf"
    assert_failure 2
    assert_output "slurm-jail-nccl-check: error: refusing '$dir/all_reduce_perf': '$dir' is owned by uid 65534; what a check uses as root must be owned by root, like every directory above it, and not writable by group or others"
    chown 0 "$dir"
    chmod 0775 "$dir/all_reduce_perf"
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt FAKE_NCCL_ARGS=$ran \
        nccl --gpu-model A100 --gpus 4 --binary "$dir/all_reduce_perf"
    assert_failure 2
    assert_output --partial "'$dir/all_reduce_perf' is writable by group or others (mode 0775)"
    [ ! -e "$ran" ]
    # A bare name is looked up in the system's directories only, never in $PATH.
    chmod 0755 "$dir/all_reduce_perf"
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt FAKE_NCCL_ARGS=$ran \
        PATH="$dir:$PATH" nccl --gpu-model A100 --gpus 4 --binary all_reduce_perf
    assert_failure 2
    assert_output --partial "cannot run 'all_reduce_perf': No such file or directory; install nccl-tests"
    [ ! -e "$ran" ]
}

@test "a config file or a state directory another user could write is refused before any work" {
    local conf=$BATS_TEST_TMPDIR/health.conf shared=$BATS_TEST_TMPDIR/shared ran=$BATS_TEST_TMPDIR/ran
    printf '[nccl-check]\nbinary = /home/alice/all_reduce_perf\n' >"$conf"
    chmod 0666 "$conf"
    nccl --gpu-model A100 --gpus 4 --config "$conf"
    assert_failure 2
    assert_output --partial "slurm-jail-nccl-check: error: config file: refusing '$conf': '$conf' is writable by group or others (mode 0666)"
    install -d -m 1777 "$shared"
    FAKE_NCCL_FIXTURE=$FIXTURES/nccl/04_healthy_4gpu_nvswitch_a100.txt FAKE_NCCL_ARGS=$ran \
        run nccl_check --node n1 --gpu-model A100 --gpus 4 --state-dir "$shared"
    assert_failure 2
    assert_output --partial "refusing '$shared': '$shared' is writable by group or others (mode 1777)"
    [ ! -e "$ran" ] # refused before all_reduce_perf ran
    run ls -A "$shared"
    assert_output ''
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


@test "the submitter's [nccl-check] section travels on the check's command line" {
    local conf=$BATS_TEST_TMPDIR/health.conf sinfo=$BATS_TEST_TMPDIR/sinfo scontrol
    scontrol=$(fake_scontrol)
    printf '#!/bin/sh\nprintf "n1|idle\\n"\n' >"$sinfo"
    chmod +x "$sinfo"
    printf '[nccl-check]\nthreshold = H100x8=420\ntimeout = 600\n' >"$conf"
    run "$HEALTH_BIN/slurm-jail-nccl-submit" --config "$conf" --sinfo "$sinfo" --scontrol "$scontrol" --dry-run -- \
        --drain-after 2
    assert_success
    # the check runs in the jail, at the contract's path; the arguments after -- come last and win
    assert_line "dry-run: would submit for n1: sbatch --exclusive --nodes=1 --nodelist=n1 --job-name=slurm-jail-nccl-check --wrap=exec '/usr/sbin/slurm-jail-nccl-check' --node 'n1' '--threshold=H100x8=420' '--timeout=600' '--drain-after' '2'"
    run nccl_submit --sinfo "$sinfo" --scontrol "$scontrol" --dry-run --check-command slurm-jail-nccl-check
    assert_failure 2
    assert_output "slurm-jail-nccl-submit: error: --check-command 'slurm-jail-nccl-check' is not an absolute path: the job runs it as root, so it must not be looked up in the job's PATH"
}

@test "the driver reads [nccl-submit] from the config file (sinfo and scontrol replaced by scripts)" {
    local conf=$BATS_TEST_TMPDIR/health.conf sinfo=$BATS_TEST_TMPDIR/sinfo scontrol
    # n5 is held by the new-node gate's reservation, n6 by someone else's maintenance
    scontrol=$(fake_scontrol "ReservationName=slurm-jail-gate-n5 Nodes=n5 Flags=MAINT,IGNORE_JOBS,SPEC_NODES Users=root State=ACTIVE
ReservationName=slurm-jail-gate-n6 Nodes=n6 Flags=MAINT,SPEC_NODES Users=alice State=ACTIVE")
    printf '#!/bin/sh\nprintf "n1|idle\\nn2|drained\\nn3|mixed\\nn1|idle\\nn4|idle*\\nn5|maint\\nn6|maint\\n"\n' >"$sinfo"
    chmod +x "$sinfo"
    printf '[nccl-submit]\npartition = gpu\nsbatch-arg = --time=30\ncheck-command = /usr/sbin/slurm-jail-nccl-check\nscontrol = %s\n' "$scontrol" >"$conf"
    run "$HEALTH_BIN/slurm-jail-nccl-submit" --config "$conf" --sinfo "$sinfo" --dry-run
    assert_success
    assert_line "dry-run: would submit for n5: sbatch --exclusive --nodes=1 --nodelist=n5 --job-name=slurm-jail-nccl-check --reservation=slurm-jail-gate-n5 --partition=gpu --time=30 --wrap=exec '/usr/sbin/slurm-jail-nccl-check' --node 'n5'"
    assert_line 'skip n6: state maint'
    assert_line "dry-run: would submit for n1: sbatch --exclusive --nodes=1 --nodelist=n1 --job-name=slurm-jail-nccl-check --partition=gpu --time=30 --wrap=exec '/usr/sbin/slurm-jail-nccl-check' --node 'n1'"
    assert_line --partial 'dry-run: would submit for n3:'
    assert_line 'skip n2: state drained'
    assert_line 'skip n4: state idle*'
    assert_line 'would submit 3 job(s), skipped 3 node(s)'
    run "$HEALTH_BIN/slurm-jail-nccl-submit" --config "$conf" --sinfo "$sinfo" --dry-run --fabric
    assert_line 'skip n5: held by the new-node gate (reservation slurm-jail-gate-n5)'
}
