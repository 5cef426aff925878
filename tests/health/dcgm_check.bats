#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The quick check with --dcgm-level: the real binary with the fake NVML runs a
# fake dcgmi (a script that prints a recorded output from fixtures/dcgm and
# exits with dcgmi's code) found through the same trusted lookup as every
# program the checks run (no Slurm: --no-drain).

load helpers
load fake_dcgmi

DCGM_FIXTURES=$SLURM_JAIL_ROOT/tests/health/fixtures/dcgm

# fake_dcgmi FIXTURE [EXIT [SLEEP]]: writes $BATS_TEST_TMPDIR/dcgm-bin/dcgmi,
# which records its arguments in $BATS_TEST_TMPDIR/dcgmi.args, sleeps, prints
# FIXTURE and exits with EXIT.
fake_dcgmi() {
    write_fake_dcgmi "$BATS_TEST_TMPDIR/dcgm-bin" "$BATS_TEST_TMPDIR/dcgmi.args" "$DCGM_FIXTURES/$1" "${@:2}"
}

dcgm_check() {
    run gpu_check --no-drain --node n1 --expected-gpus 8 --kernel-log "$(empty_kmsg)" "$@"
}

@test "a failed DCGM test drains, naming the test, the GPU and DCGM's words" {
    local m=$BATS_TEST_TMPDIR/gpu.prom dcgmi
    dcgmi=$(fake_dcgmi dcgm4_r1_gb10_software_fail.json 226)
    dcgm_check --dcgm-level 1 --dcgmi "$dcgmi" --metrics-file "$m"
    assert_failure 1
    assert_output 'DRAIN dcgm: software gpu 0: fail: Persistence Mode: Persistence mode for GPU 0 is disabled. Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root.'
    run cat "$BATS_TEST_TMPDIR/dcgmi.args"
    assert_output 'diag -r 1 -j'
    run grep -F 'slurm_jail_gpu_check_dcgm_result{node="n1",test="software",gpu="0"} 0' "$m"
    assert_success
    run grep -F 'slurm_jail_gpu_check_ok{node="n1",check="dcgm",gpu="node"} 0' "$m"
    assert_success
    run grep -F 'slurm_jail_gpu_check_drain{node="n1"} 1' "$m"
    assert_success
    run grep -F 'slurm_jail_gpu_check_dcgm_outcome{node="n1",outcome="ok"} 1' "$m"
    assert_success
}

@test "a level-3 run that passes on 8 GPUs: OK, one gauge per GPU, the level" {
    local m=$BATS_TEST_TMPDIR/gpu.prom dcgmi
    dcgmi=$(fake_dcgmi derived_dcgm4_r3_pass_8gpu.json)
    dcgm_check --dcgm-level 3 --budget 20 --dcgmi "$dcgmi" --metrics-file "$m" --json
    assert_success
    echo "$output" | jq -e '.verdict == "pass" and .dcgm.level == 3 and .dcgm.outcome == "ok"'
    echo "$output" | jq -e '[.dcgm.results[] | select(.status == "pass")] | length == 8'
    run grep -c '^slurm_jail_gpu_check_dcgm_result{node="n1",test="diagnostic",gpu="[0-7]"} 1$' "$m"
    assert_output 8
    run grep -F 'slurm_jail_gpu_check_dcgm_level{node="n1"} 3' "$m"
    assert_success
    run cat "$BATS_TEST_TMPDIR/dcgmi.args"
    assert_output 'diag -r 3 -j'
}

@test "a DCGM warning warns; a skipped test is neither a failure nor a warning" {
    local m=$BATS_TEST_TMPDIR/gpu.prom dcgmi
    dcgmi=$(fake_dcgmi derived_dcgm4_r1_gb10_warn.json)
    dcgm_check --dcgm-level 1 --dcgmi "$dcgmi"
    assert_success
    assert_output --regexp '^WARN dcgm: software gpu 0: warn: Persistence Mode: '
    dcgmi=$(fake_dcgmi derived_dcgm3_r3_t400_skip.json)
    dcgm_check --dcgm-level 1 --dcgmi "$dcgmi" --metrics-file "$m"
    assert_success
    assert_output --regexp '^OK n1: all GPU checks passed'
    run grep -F 'slurm_jail_gpu_check_dcgm_result{node="n1",test="GPU Memory",gpu="0"} 3' "$m"
    assert_success
}

@test "no verdict (nv-hostengine down, dcgmi missing, garbage) warns, or drains when required" {
    local m=$BATS_TEST_TMPDIR/gpu.prom dcgmi
    dcgmi=$(fake_dcgmi dcgmi_no_hostengine.txt 235)
    dcgm_check --dcgm-level 1 --dcgmi "$dcgmi" --metrics-file "$m"
    assert_success
    assert_output 'WARN dcgm: nv-hostengine is not reachable (dcgmi: Error: unable to establish a connection to the specified host: localhost): start it (nv-hostengine, or systemctl start nvidia-dcgm)'
    run grep -F 'slurm_jail_gpu_check_dcgm_outcome{node="n1",outcome="no_hostengine"} 1' "$m"
    assert_success
    dcgm_check --dcgm-level 1 --dcgmi "$dcgmi" --dcgm-required
    assert_failure 1
    assert_output --regexp '^DRAIN dcgm: nv-hostengine is not reachable'
    dcgm_check --dcgm-level 1 --dcgmi "$BATS_TEST_TMPDIR/none/dcgmi"
    assert_success
    assert_output 'WARN dcgm: dcgmi not found (No such file or directory): install DCGM or set dcgm-level = off'
    dcgmi=$(fake_dcgmi README.md 0)
    dcgm_check --dcgm-level 1 --dcgmi "$dcgmi" --dcgm-required
    assert_failure 1
    assert_output --regexp "^DRAIN dcgm: dcgmi diag -r 1 exited 0 without a readable result \(dcgmi's output is not valid JSON\)"
}

@test "a dcgmi that hangs is killed at the deadline and reported" {
    local start end dcgmi
    dcgmi=$(fake_dcgmi dcgm4_r1_gb10_software_fail.json 0 37.25)
    start=$(now_ms)
    dcgm_check --dcgm-level 1 --dcgmi "$dcgmi" --budget 3
    end=$(now_ms)
    assert_success
    assert_output --regexp '^WARN dcgm: dcgmi diag -r 1 did not finish within [0-9.]+ s and was killed'
    # budget 3 s, 2 s kept for Slurm: dcgmi got about 1 s
    [ $((end - start)) -lt 3000 ]
    [ $((end - start)) -ge 900 ]
    run pgrep -f 'sleep 37.25'
    assert_failure
    dcgm_check --dcgm-level 1 --dcgmi "$dcgmi" --budget 3 --dcgm-required
    assert_failure 1
    assert_output --regexp '^DRAIN dcgm: dcgmi diag -r 1 did not finish within'
}

@test "dcgmi in a directory others can write is refused, never run" {
    local dcgmi
    dcgmi=$(fake_dcgmi dcgm4_r1_gb10_software_fail.json 226)
    chmod 0777 "$(dirname "$dcgmi")"
    dcgm_check --dcgm-level 1 --dcgmi "$dcgmi"
    assert_failure 2
    assert_output --partial "dcgm-bin"
    [ ! -e "$BATS_TEST_TMPDIR/dcgmi.args" ]
}

@test "DCGM is off by default, and a bad level is an error" {
    local dcgmi
    dcgmi=$(fake_dcgmi dcgm4_r1_gb10_software_fail.json 226)
    dcgm_check --dcgmi "$dcgmi" --json
    assert_success
    echo "$output" | jq -e '.dcgm == null'
    [ ! -e "$BATS_TEST_TMPDIR/dcgmi.args" ]
    dcgm_check --dcgm-level 5
    assert_failure
    assert_output --partial 'dcgm-level'
    run "$HEALTH_BIN/slurm-jail-gpu-check" --help
    assert_output --partial '--dcgm-level'
    assert_output --partial '--dcgm-required'
}
