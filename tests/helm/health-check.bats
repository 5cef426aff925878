#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns and in-container scripts
# Slurm's HealthCheckProgram as the chart renders it: the jail filesystem
# check (slurm-jail-fs-check, healthChecks.jailCheck) on every node, GPU or
# not, beside the quick GPU check on GPU nodesets. The rendered script is run
# for real with fake checks that record how they were called.

load helpers

setup_file() {
    require_helm_tools "$root" kubernetes-models
    export R=$BATS_FILE_TMPDIR
    render_validated "$R/cpu.json" -f "$chart/examples/cpu-only.yaml"
    render_validated "$R/gpu.json" -f "$chart/examples/gpu-two-nodesets.yaml"
}

# script FILE: the rendered health-check script, made executable, its path on stdout.
script() {
    local out=$BATS_TEST_TMPDIR/hc.$RANDOM
    cm_data "$1" t-slurm-cluster-scripts health-check >"$out"
    chmod +x "$out"
    echo "$out"
}

# fake NAME RC: a check that logs "NAME node=<SLURMD_NODENAME> <args>" to
# $BATS_TEST_TMPDIR/calls and exits RC; its path in SLURM_JAIL_<NAME>_CHECK.
fake() {
    printf '#!/bin/sh\necho "%s node=$SLURMD_NODENAME $*" >>"%s/calls"\nexit %s\n' "$1" "$BATS_TEST_TMPDIR" "$2" >"$BATS_TEST_TMPDIR/$1-check"
    chmod +x "$BATS_TEST_TMPDIR/$1-check"
}

calls() { cat "$BATS_TEST_TMPDIR/calls" 2>/dev/null; : >"$BATS_TEST_TMPDIR/calls"; }

setup() {
    fake fs 0
    fake gpu 0
    export SLURM_JAIL_FS_CHECK=$BATS_TEST_TMPDIR/fs-check SLURM_JAIL_GPU_CHECK=$BATS_TEST_TMPDIR/gpu-check
}

@test "CPU-only cluster: slurm.conf runs the HealthCheckProgram, which runs the jail check on every node" {
    run cm_data "$R/cpu.json" t-slurm-cluster-slurm-config slurm.conf
    assert_line HealthCheckProgram=/opt/slurm-jail-chart/health-check
    assert_line HealthCheckInterval=300
    assert_line HealthCheckNodeState=ANY,CYCLE
    hc=$(script "$R/cpu.json")
    run cat "$hc"
    assert_output --partial '"${SLURM_JAIL_FS_CHECK:-/usr/sbin/slurm-jail-fs-check}" --jail /mnt/jail; fs=$?'
    shellcheck -s sh "$hc"
    for n in t-slurm-cluster-cpu-0 t-slurm-cluster-cpu-17 some-other-host; do
        SLURMD_NODENAME=$n run "$hc"
        assert_success
        run calls
        assert_output "fs node=$n --jail /mnt/jail" # no GPU check on a CPU node
    done
}

@test "GPU nodeset: the jail check and then the GPU check; a GPU nodeset without gpuHealthCheck and CPU nodes get the jail check alone" {
    hc=$(script "$R/gpu.json")
    shellcheck -s sh "$hc"
    SLURMD_NODENAME=t-slurm-cluster-h100-3 run "$hc"
    assert_success
    run calls
    assert_output $'fs node=t-slurm-cluster-h100-3 --jail /mnt/jail\ngpu node=t-slurm-cluster-h100-3 '
    for n in t-slurm-cluster-a100-0 t-slurm-cluster-cpu-1 t-slurm-cluster-h100-x1; do
        SLURMD_NODENAME=$n run "$hc"
        assert_success
        run calls
        assert_output "fs node=$n --jail /mnt/jail"
    done
}

@test "the verdict: a check that drained the node (1) is a pass for slurmd, one that could not work (2) fails; both always run" {
    hc=$(script "$R/gpu.json")
    export SLURMD_NODENAME=t-slurm-cluster-h100-0
    for rcs in "1 0" "0 1" "1 1"; do
        fake fs "${rcs% *}"
        fake gpu "${rcs#* }"
        run "$hc"
        assert_success
        run calls
        assert_line --index 0 --partial "fs node=$SLURMD_NODENAME"
        assert_line --index 1 --partial "gpu node=$SLURMD_NODENAME"
    done
    for rcs in "2 0" "0 2" "2 1"; do
        fake fs "${rcs% *}"
        fake gpu "${rcs#* }"
        run "$hc"
        assert_failure
        run calls
        assert_line --index 1 --partial "gpu node=" # a failing jail check does not skip the GPU check
    done
}

@test "jailCheck false: no jail check anywhere; a CPU-only cluster then has no HealthCheckProgram" {
    render_validated "$BATS_TEST_TMPDIR/off.json" -f "$chart/examples/cpu-only.yaml" --set healthChecks.jailCheck=false
    run grep -c '^HealthCheck' <(cm_data "$BATS_TEST_TMPDIR/off.json" t-slurm-cluster-slurm-config slurm.conf)
    assert_output 0
    hc=$(script "$BATS_TEST_TMPDIR/off.json")
    SLURMD_NODENAME=t-slurm-cluster-cpu-0 run "$hc"
    assert_success
    run calls
    assert_output ""
    render_validated "$BATS_TEST_TMPDIR/gpu-off.json" -f "$chart/examples/gpu-two-nodesets.yaml" --set healthChecks.jailCheck=false
    hc=$(script "$BATS_TEST_TMPDIR/gpu-off.json")
    SLURMD_NODENAME=t-slurm-cluster-h100-0 run "$hc"
    assert_success
    run calls
    assert_output "gpu node=t-slurm-cluster-h100-0 "
}

@test "options pass through: fsCheckCommand, fsCheck as the [fs-check] section of health.conf, interval and node state" {
    render_validated "$BATS_TEST_TMPDIR/o.json" -f "$chart/examples/cpu-only.yaml" \
        --set healthChecks.fsCheckCommand=/opt/site/fs-check --set healthChecks.fsCheck.timeout=20 \
        --set healthChecks.fsCheck.drain-after=2 --set healthChecks.fsCheck.dry-run=true \
        --set healthChecks.interval=120 --set healthChecks.nodeState=IDLE
    run cm_data "$BATS_TEST_TMPDIR/o.json" t-slurm-cluster-health-config health.conf
    assert_output --partial $'[fs-check]\ndrain-after = 2\ndry-run = true\ntimeout = 20\n[nccl-check]'
    run cm_data "$BATS_TEST_TMPDIR/o.json" t-slurm-cluster-slurm-config slurm.conf
    assert_line HealthCheckInterval=120
    assert_line HealthCheckNodeState=IDLE
    unset SLURM_JAIL_FS_CHECK
    run cm_data "$BATS_TEST_TMPDIR/o.json" t-slurm-cluster-scripts health-check
    assert_output --partial '"${SLURM_JAIL_FS_CHECK:-/opt/site/fs-check}" --jail /mnt/jail; fs=$?'
    # the workers mount health.conf where the check reads it by default
    obj "$BATS_TEST_TMPDIR/o.json" StatefulSet t-slurm-cluster-cpu |
        jq -e '.spec.template.spec.containers[0].volumeMounts[] | select(.name == "health-config") | .mountPath == "/etc/slurm-jail"' >/dev/null
}

@test "healthChecks.fsCheck cannot move the probe off the jail" {
    run "$helm_bin" template t "$chart" --set healthChecks.fsCheck.jail=/srv/other
    assert_failure
    assert_output --partial "healthChecks.fsCheck.jail: the jail check always probes the jail's mount path (/mnt/jail"
}
