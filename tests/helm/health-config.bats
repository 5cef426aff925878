#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns and in-container scripts
# The chart's health.conf against the real health programs
# (health/), as built by tests/run-all into $SLURM_JAIL_BUILD_DIR/health:
# every section and key the chart writes must be accepted by them.

load helpers
load ../lib/fake_scontrol

setup_file() {
    require_helm_tools "$root" kubernetes-models
    export R=$BATS_FILE_TMPDIR
    render_validated "$R/gpu.json" -f "$chart/examples/gpu-two-nodesets.yaml"
    cm_data "$R/gpu.json" t-slurm-cluster-health-config health.conf >"$R/health.conf"
}

setup() {
    hb=${SLURM_JAIL_BUILD_DIR:-$root/build}/health
}

need() { need_built "$1" "$hb/$1"; } # PROGRAM: build it unless tests/run-all did

@test "health.conf has the four sections with the values' settings" {
    run cat "$R/health.conf"
    assert_line "[gpu-check]"
    assert_line "drain-after = 2"
    assert_line "[fs-check]"
    assert_line "[nccl-check]"
    assert_line "threshold = H100x8=400"
    assert_line "threshold = A100x4=180"
    assert_line "timeout = 900"
    assert_line "[nccl-submit]"
    assert_line "partition = gpu"
    assert_line "sbatch-arg = --time=30"
}

@test "slurm-jail-gpu-check accepts the chart's [gpu-check] section" {
    need slurm-jail-gpu-check
    # no NVML here: the check itself fails (exit 1), but after reading the config
    run "$hb/slurm-jail-gpu-check" --config "$R/health.conf" --node t-slurm-cluster-h100-0 --no-drain \
        --nvml-library /nonexistent --expected-gpus 8 --metrics-file "$BATS_TEST_TMPDIR/m.prom" --state-dir "$BATS_TEST_TMPDIR/s"
    assert_failure 1
    assert_output --partial "cannot load NVML library '/nonexistent'"
    refute_output --partial "not expected"
}

@test "slurm-jail-fs-check accepts the chart's [fs-check] section, and refuses a key it does not know" {
    need slurm-jail-fs-check
    render_validated "$BATS_TEST_TMPDIR/fs.json" -f "$chart/examples/gpu-two-nodesets.yaml" \
        --set healthChecks.fsCheck.timeout=20 --set healthChecks.fsCheck.drain-after=2
    cm_data "$BATS_TEST_TMPDIR/fs.json" t-slurm-cluster-health-config health.conf >"$BATS_TEST_TMPDIR/fs.conf"
    grep -qx 'timeout = 20' "$BATS_TEST_TMPDIR/fs.conf"
    mkdir -p "$BATS_TEST_TMPDIR/jail/etc"
    # the probe runs and judges (a test directory is no safe jail root: exit 1), after reading the config
    run "$hb/slurm-jail-fs-check" --config "$BATS_TEST_TMPDIR/fs.conf" --jail "$BATS_TEST_TMPDIR/jail" \
        --node t-slurm-cluster-cpu-0 --no-drain --state-dir "$BATS_TEST_TMPDIR/s"
    [ "$status" -le 1 ] || fail "exit $status: $output"
    assert_output --regexp '^(ok|FAIL): '
    refute_output --partial "not expected"
    render_validated "$BATS_TEST_TMPDIR/bad.json" --set healthChecks.fsCheck.timeot=20
    cm_data "$BATS_TEST_TMPDIR/bad.json" t-slurm-cluster-health-config health.conf >"$BATS_TEST_TMPDIR/bad.conf"
    run "$hb/slurm-jail-fs-check" --config "$BATS_TEST_TMPDIR/bad.conf" --jail "$BATS_TEST_TMPDIR/jail" --no-drain --node n
    assert_failure
    assert_output --partial "--timeot=20"
}

@test "slurm-jail-nccl-check accepts the chart's [nccl-check] section and thresholds" {
    need slurm-jail-nccl-check
    run "$hb/slurm-jail-nccl-check" --config "$R/health.conf" --node t-slurm-cluster-h100-0 --no-drain \
        --gpu-model H100 --gpus 8 --binary /bin/false --state-dir "$BATS_TEST_TMPDIR/s"
    assert_failure 1
    refute_output --partial "not expected"
    refute_output --partial "config line"
}

@test "slurm-jail-nccl-submit (the CronJob's command) accepts the chart's [nccl-submit] section" {
    need slurm-jail-nccl-submit
    printf '#!/bin/sh\necho "sinfo $*" >>"%s/calls"\n' "$BATS_TEST_TMPDIR" >"$BATS_TEST_TMPDIR/sinfo"
    chmod +x "$BATS_TEST_TMPDIR/sinfo"
    fake_scontrol >/dev/null # no reservation of the new-node gate (the submitter asks for them)
    run "$hb/slurm-jail-nccl-submit" --config "$R/health.conf" --dry-run --sinfo "$BATS_TEST_TMPDIR/sinfo" \
        --scontrol "$BATS_TEST_TMPDIR/scontrol" --sbatch /bin/false
    assert_success
    assert_output --partial "would submit 0 job(s)"
    grep -q -- 'gpu' "$BATS_TEST_TMPDIR/calls" # partition = gpu reached sinfo
    # the CronJob runs exactly this program
    obj "$R/gpu.json" CronJob t-slurm-cluster-nccl-check | jq -e '.spec.jobTemplate.spec.template.spec.containers[0].command[1] == "/usr/sbin/slurm-jail-nccl-submit"' >/dev/null
}

@test "a setting the programs do not know is refused by them (the check above can fail)" {
    need slurm-jail-nccl-submit
    render_validated "$BATS_TEST_TMPDIR/bad.json" -f "$chart/examples/gpu-two-nodesets.yaml" --set healthChecks.nccl.submit.partitions=gpu
    cm_data "$BATS_TEST_TMPDIR/bad.json" t-slurm-cluster-health-config health.conf >"$BATS_TEST_TMPDIR/bad.conf"
    run "$hb/slurm-jail-nccl-submit" --config "$BATS_TEST_TMPDIR/bad.conf" --dry-run --sinfo /bin/true --sbatch /bin/false
    assert_failure
    assert_output --partial "--partitions=gpu"
}

@test "the programs' install path in the images is where the chart runs them" {
    # health/ installs into CMAKE_INSTALL_SBINDIR; the image build uses prefix /usr
    grep -q 'RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR}' "$root/health/CMakeLists.txt"
    grep -q -- '-DCMAKE_INSTALL_PREFIX=/usr' "$root/images/build/Containerfile"
    run cm_data "$R/gpu.json" t-slurm-cluster-scripts health-check
    assert_output --partial '/usr/sbin/slurm-jail-gpu-check'
    assert_output --partial '/usr/sbin/slurm-jail-fs-check'
    grep -q '/usr/sbin/slurm-jail-fs-check' "$root/docs/contract.md"
}
