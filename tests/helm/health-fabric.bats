#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154 # variables come from helpers.bash (bats `load`)
# The chart's fabric CronJob (healthChecks.ncclFabric) and new-node gate
# (healthChecks.gate): what they render, and that the real health programs
# (health/, built into $SLURM_JAIL_BUILD_DIR/health) accept the health.conf
# they get.

load helpers
load ../lib/fake_scontrol

setup_file() {
    require_helm_tools "$root" kubernetes-models
    export R=$BATS_FILE_TMPDIR
    render_validated "$R/gpu.json" -f "$chart/examples/gpu-two-nodesets.yaml"
    render_validated "$R/on.json" -f "$chart/examples/gpu-two-nodesets.yaml" \
        --set healthChecks.ncclFabric.enabled=true --set healthChecks.gate=true \
        --set-string healthChecks.ncclFabric.schedule="15 5 * * 1" \
        --set healthChecks.ncclFabric.activeDeadlineSeconds=5400 \
        --set healthChecks.ncclFabric.fabric.max-drain-fraction=0.5 \
        --set-string 'healthChecks.ncclFabric.fabric.srun-arg=--gpus-per-node=8' \
        --set 'healthChecks.ncclFabric.extraArgs[0]=--partition=gpu'
    cm_data "$R/on.json" t-slurm-cluster-health-config health.conf >"$R/health.conf"
}

setup() {
    hb=${SLURM_JAIL_BUILD_DIR:-$root/build}/health
}

need() { need_built "$1" "$hb/$1"; } # PROGRAM: build it unless tests/run-all did

@test "fabric CronJob and gate: off by default" {
    run obj "$R/gpu.json" CronJob t-slurm-cluster-nccl-fabric
    assert_failure
    run cm_data "$R/gpu.json" t-slurm-cluster-health-config health.conf
    refute_output --partial 'gate'
    assert_output --partial $'[nccl-submit]\npartition = gpu\nsbatch-arg = --time=30\n[nccl-fabric]'
}

@test "fabric CronJob: submit --fabric on its schedule, Forbid, deadline, health.conf and munge" {
    cj=$(obj "$R/on.json" CronJob t-slurm-cluster-nccl-fabric)
    jq -e '.spec.schedule == "15 5 * * 1" and .spec.suspend == false and .spec.concurrencyPolicy == "Forbid"' <<<"$cj" >/dev/null
    jq -e '.spec.jobTemplate.spec.activeDeadlineSeconds == 5400 and .spec.jobTemplate.spec.backoffLimit == 0' <<<"$cj" >/dev/null
    run jq -c '.spec.jobTemplate.spec.template.spec.containers[0].command' <<<"$cj"
    assert_output '["/opt/slurm-jail-chart/with-munge","/usr/sbin/slurm-jail-nccl-submit","--fabric","--sbatch-arg=--output=/root/nccl-fabric-%j.out","--partition=gpu"]'
    jq -e '.spec.jobTemplate.spec.template.spec.containers[0].volumeMounts | any(.mountPath == "/etc/slurm-jail" and .name == "health-config")' <<<"$cj" >/dev/null
    # the one-node CronJob is still there, unchanged
    obj "$R/on.json" CronJob t-slurm-cluster-nccl-check | jq -e '.spec.jobTemplate.spec.template.spec.containers[0].command | index("--fabric") == null' >/dev/null
}

@test "health.conf: [nccl-fabric] from values; the gate in [gpu-check] and [nccl-check]" {
    run cat "$R/health.conf"
    assert_output --partial $'[gpu-check]\ngate = true\ngate-dir = /mnt/jail/var/lib/slurm-jail/health\ndrain-after = 2'
    assert_output --partial $'[nccl-check]\ngate = true\nthreshold = A100x4=180'
    assert_output --partial $'[nccl-fabric]\nmax-drain-fraction = 0.5\nsrun-arg = --gpus-per-node=8'
}

@test "slurm-jail-gpu-check and slurm-jail-nccl-check accept the gate's keys" {
    need slurm-jail-gpu-check
    need slurm-jail-nccl-check
    run "$hb/slurm-jail-gpu-check" --config "$R/health.conf" --node t-slurm-cluster-h100-0 --no-drain \
        --nvml-library /nonexistent --expected-gpus 8 --metrics-file "$BATS_TEST_TMPDIR/m.prom" --state-dir "$BATS_TEST_TMPDIR/s"
    assert_failure 1
    assert_output --partial "cannot load NVML library '/nonexistent'"
    refute_output --partial "not expected"
    run "$hb/slurm-jail-nccl-check" --config "$R/health.conf" --node t-slurm-cluster-h100-0 --no-drain \
        --gpu-model H100 --gpus 8 --binary /bin/false --state-dir "$BATS_TEST_TMPDIR/s"
    assert_failure 1
    refute_output --partial "not expected"
    refute_output --partial "config line"
}

@test "slurm-jail-nccl-submit --fabric passes the chart's [nccl-fabric] section on to the fabric check" {
    need slurm-jail-nccl-submit
    printf '#!/bin/sh\nprintf "n1|idle\\nn2|idle\\nn3|idle\\n"\n' >"$BATS_TEST_TMPDIR/sinfo"
    chmod +x "$BATS_TEST_TMPDIR/sinfo"
    fake_scontrol >/dev/null # no reservation of the new-node gate (the submitter asks for them)
    run "$hb/slurm-jail-nccl-submit" --config "$R/health.conf" --fabric --dry-run \
        --sinfo "$BATS_TEST_TMPDIR/sinfo" --scontrol "$BATS_TEST_TMPDIR/scontrol" --sbatch /bin/false
    assert_success
    assert_output --partial "'--max-drain-fraction=0.5' '--srun-arg=--gpus-per-node=8'"
}
