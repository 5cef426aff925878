#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The quick check as a program: the real binary loads the fake NVML through
# dlopen, reads a kernel log file, and reports (no Slurm: --no-drain).

load helpers

run_check() {
    run gpu_check --no-drain --node n1 --expected-gpus 8 --kernel-log "$(empty_kmsg)" "$@"
}

@test "healthy 8x H100 node passes with one OK line" {
    run_check
    assert_success
    assert_output --regexp '^OK n1: all GPU checks passed in [0-9.]+ s$'
}

@test "each failure mode gives one line naming the GPU and the cause" {
    declare -A want=(
        [lost]='DRAIN GPU 3: nvmlDeviceGetPciInfo_v3 says: GPU is lost (GPU lost or fallen off the bus)'
        [ecc]='DRAIN GPU 3 (00000000:48:00.0): 2 volatile uncorrectable ECC errors'
        [retired_pages]='DRAIN GPU 3 (00000000:48:00.0): retired pages pending (reset the GPU or reboot)'
        [remap_pending]='DRAIN GPU 3 (00000000:48:00.0): row remap pending (reset the GPU or reboot)'
        [remap_failed]='DRAIN GPU 3 (00000000:48:00.0): row remapping failed (replace the GPU)'
        [pcie_width]='DRAIN GPU 3 (00000000:48:00.0): PCIe link width x8 below its maximum x16'
        [pcie_gen]='DRAIN GPU 3 (00000000:48:00.0): PCIe link generation 3 below its maximum 5'
        [nvlink]='DRAIN GPU 3 (00000000:48:00.0): 1 of 18 NVLinks inactive (links 5)'
        [missing_gpu]='DRAIN 7 GPUs visible, 8 expected'
        [init_fail]='DRAIN nvmlInit_v2 failed: Driver Not Loaded (9)'
    )
    for fault in "${!want[@]}"; do
        FAKE_NVML_FAULT=$fault run_check
        assert_failure 1
        assert_output "${want[$fault]}"
    done
}

@test "temperature and throttling warn but do not fail" {
    FAKE_NVML_FAULT=hot run_check
    assert_success
    assert_line 'WARN GPU 3 (00000000:48:00.0): temperature 92 C at or above 85 C'
    assert_line 'WARN GPU 3 (00000000:48:00.0): clocks throttled: HW thermal slowdown'
    FAKE_NVML_FAULT=throttle run_check
    assert_success
    assert_output 'WARN GPU 3 (00000000:48:00.0): clocks throttled: SW thermal slowdown'
}

@test "--json reports the verdict, problems and GPU values" {
    FAKE_NVML_FAULT=ecc FAKE_NVML_FAULT_GPU=5 run_check --json
    assert_failure 1
    echo "$output" | jq -e '.verdict == "fail" and .node == "n1"'
    echo "$output" | jq -e '.problems | length == 1'
    echo "$output" | jq -e '.problems[0] | .check == "ecc_uncorrected" and .gpu == 5 and .severity == "drain"'
    echo "$output" | jq -e '.gpus | length == 8'
    echo "$output" | jq -e '.gpus[5].ecc_uncorrected_volatile == 2 and .gpus[0].ecc_uncorrected_volatile == 0'
    # values from the real capture
    echo "$output" | jq -e '.gpus[0].name == "NVIDIA H100 80GB HBM3" and .gpus[0].temperature_c == 41'
    echo "$output" | jq -e '[.checks[] | select(.ok == false)] == [{"check":"ecc_uncorrected","gpu":5,"ok":false}]'
    run_check --json
    assert_success
    echo "$output" | jq -e '.verdict == "pass" and (.problems | length == 0)'
}

@test "--metrics-file writes one gauge per check per GPU, atomically" {
    local m=$BATS_TEST_TMPDIR/gpu.prom
    FAKE_NVML_FAULT=nvlink run_check --metrics-file "$m"
    assert_failure 1
    run grep -c '^slurm_jail_gpu_check_ok{' "$m"
    assert_output 66 # 2 node-level + 8 GPUs x 8 checks
    run grep -F 'slurm_jail_gpu_check_ok{node="n1",check="nvlink",gpu="3"} 0' "$m"
    assert_success
    run grep -F 'slurm_jail_gpu_check_ok{node="n1",check="nvlink",gpu="2"} 1' "$m"
    assert_success
    run grep -F 'slurm_jail_gpu_check_drain{node="n1"} 1' "$m"
    assert_success
    run grep -E '^slurm_jail_gpu_check_duration_seconds\{node="n1"\} [0-9.]+$' "$m"
    assert_success
    run ls -A "$BATS_TEST_TMPDIR"
    refute_output --partial '.tmp.'
}

@test "the recorded H200 node: one GPU expected passes, more expected drains" {
    FAKE_NVML_QUERY=$H200_QUERY run gpu_check --no-drain --node n1 --expected-gpus 1 \
        --kernel-log "$(empty_kmsg)" --json
    assert_success
    # values from the real capture 07_h200_nvidia-smi-q_idle.txt
    echo "$output" | jq -e '.gpus | length == 1'
    echo "$output" | jq -e '.gpus[0] | .name == "NVIDIA H200" and .bus_id == "00000000:00:06.0"'
    echo "$output" | jq -e '.gpus[0] | .temperature_c == 38 and .pcie_gen == 5 and .pcie_width_max == 16'
    echo "$output" | jq -e '.gpus[0] | .nvlinks_total == null and .ecc_uncorrected_volatile == 0'
    FAKE_NVML_QUERY=$H200_QUERY run gpu_check --no-drain --node n1 --expected-gpus 8 \
        --kernel-log "$(empty_kmsg)"
    assert_failure 1
    assert_output 'DRAIN 1 GPUs visible, 8 expected'
}

@test "the checks on one H200: faults on GPU 0 name its bus id; no NVLink, no NVLink gauge" {
    local m=$BATS_TEST_TMPDIR/h200.prom
    FAKE_NVML_QUERY=$H200_QUERY FAKE_NVML_FAULT=ecc FAKE_NVML_FAULT_GPU=0 run gpu_check \
        --no-drain --node n1 --expected-gpus 1 --kernel-log "$(empty_kmsg)" --metrics-file "$m"
    assert_failure 1
    assert_output 'DRAIN GPU 0 (00000000:00:06.0): 2 volatile uncorrectable ECC errors'
    run grep -c '^slurm_jail_gpu_check_ok{' "$m"
    assert_output 9 # 2 node-level + 1 GPU x 7 checks (no nvlink)
    run grep -c 'check="nvlink"' "$m"
    assert_output 0
    FAKE_NVML_QUERY=$H200_QUERY FAKE_NVML_FAULT=hot FAKE_NVML_FAULT_GPU=0 run gpu_check \
        --no-drain --node n1 --expected-gpus 1 --kernel-log "$(empty_kmsg)"
    assert_success
    assert_line 'WARN GPU 0 (00000000:00:06.0): temperature 92 C at or above 85 C'
}

@test "a hung NVML call is reported as a failure within the budget" {
    local start end
    start=$(now_ms)
    FAKE_NVML_FAULT=hang run_check --budget 4
    end=$(now_ms)
    assert_failure 1
    # NVML gets 3/4 of the budget, the rest is kept for the kernel log and Slurm.
    assert_output 'DRAIN NVML call nvmlDeviceGetTotalEccErrors on GPU 3 did not return within 3.0 s (hung GPU or driver)'
    # The budget is a hard limit of the program, not a speed target.
    [ $((end - start)) -lt 4000 ]
    # and the hung probe process is gone
    run pgrep -f 'slurm-jail-gpu-check.*--budget 4'
    assert_failure
}

@test "a recent fatal Xid drains, an old one or a non-fatal one does not" {
    local up log=$BATS_TEST_TMPDIR/kmsg
    up=$(cut -d' ' -f1 /proc/uptime | tr -d .)0000 # microseconds since boot
    printf '4,1,%s,-;NVRM: Xid (PCI:0000:48:00): 79, pid=1, GPU has fallen off the bus.\n' \
        $((up - 5000000)) >"$log"
    run gpu_check --no-drain --node n1 --expected-gpus 8 --kernel-log "$log"
    assert_failure 1
    assert_output 'DRAIN GPU 3 (00000000:48:00.0): fatal Xid 79: Xid (PCI:0000:48:00): 79, pid=1, GPU has fallen off the bus.'
    run gpu_check --no-drain --node n1 --expected-gpus 8 --kernel-log "$log" --xid-window 1
    assert_success
    run gpu_check --no-drain --node n1 --expected-gpus 8 --kernel-log "$log" --fatal-xids 48,95
    assert_success
    printf '4,1,%s,-;NVRM: Xid (PCI:0000:48:00): 13, pid=1, Graphics SM Warp Exception\n' \
        $((up - 5000000)) >"$log"
    run gpu_check --no-drain --node n1 --expected-gpus 8 --kernel-log "$log"
    assert_success
}

@test "an unreadable kernel log is a warning that says so" {
    run gpu_check --no-drain --node n1 --expected-gpus 8 --kernel-log /nonexistent/kmsg
    assert_success
    assert_output "WARN Xids not checked: cannot read the kernel log '/nonexistent/kmsg': No such file or directory"
}

@test "bad input is a clear error, not a fallback" {
    run gpu_check --no-drain --expected-gpus 8 --fatal-xids '48;79'
    assert_failure 2
    assert_output --partial "bad Xid list '48;79'"
    run env -u SLURMD_NODENAME "$HEALTH_BIN/slurm-jail-gpu-check" --config /dev/null --expected-gpus 8
    assert_failure 2
    assert_output --partial 'no node name: slurmd sets SLURMD_NODENAME'
    run gpu_check --no-drain
    assert_failure 2
    assert_output --partial 'the expected GPU count is unknown: pass --expected-gpus'
    run gpu_check --no-drain --node n1 --expected-gpus 8 --nvml-library /nonexistent/libnvidia-ml.so.1
    assert_failure 1
    assert_output --partial "DRAIN cannot load NVML library '/nonexistent/libnvidia-ml.so.1'"
}

@test "the config file's [gpu-check] section sets defaults; unknown keys are errors" {
    local conf=$BATS_TEST_TMPDIR/health.conf
    printf '[gpu-check]\nexpected-gpus = 9\nno-drain = true\n[nccl-check]\ngpus = 8\n' >"$conf"
    run "$HEALTH_BIN/slurm-jail-gpu-check" --config "$conf" --nvml-library "$FAKE_NVML" \
        --node n1 --kernel-log "$(empty_kmsg)"
    assert_failure 1
    assert_output 'DRAIN 8 GPUs visible, 9 expected'
    # the command line wins over the config file
    run "$HEALTH_BIN/slurm-jail-gpu-check" --config "$conf" --nvml-library "$FAKE_NVML" \
        --node n1 --kernel-log "$(empty_kmsg)" --expected-gpus 8
    assert_success
    printf '[gpu-check]\nexpected-gpu = 8\n' >"$conf"
    run "$HEALTH_BIN/slurm-jail-gpu-check" --config "$conf" --nvml-library "$FAKE_NVML" --no-drain
    assert_failure
    assert_output --partial 'expected-gpu'
}

@test "--help and the man page exist" {
    run "$HEALTH_BIN/slurm-jail-gpu-check" --help
    assert_success
    assert_output --partial '--metrics-file'
    run man -l "$SLURM_JAIL_ROOT/health/man/slurm-jail-gpu-check.8"
    assert_success
    assert_output --partial 'HealthCheckProgram'
}
