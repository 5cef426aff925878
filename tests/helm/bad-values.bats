#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns and in-container scripts
# Bad values are refused with a message that names the key (values.schema.json
# for types, unknown keys and enums; templates/validate.yaml for checks across
# keys).

load helpers

setup_file() {
    require_helm_tools "$root" kubernetes-models
}

# refused VALUES_YAML MESSAGE...: helm template must fail and print every MESSAGE.
refused() {
    local values=$1
    shift
    printf '%s\n' "$values" >"$BATS_TEST_TMPDIR/bad.yaml"
    run "$helm_bin" template t "$chart" -f "$BATS_TEST_TMPDIR/bad.yaml"
    assert_failure
    for msg in "$@"; do
        assert_output --partial "$msg"
    done
    # helm lint checks the schema too; template `fail`s are only logged by
    # lint (helm's lint mode), so only schema cases are asserted there.
    if [ "${lint:-yes}" = yes ]; then
        run "$helm_bin" lint --strict "$chart" -f "$BATS_TEST_TMPDIR/bad.yaml"
        assert_failure
    fi
}

# refused_by_template: the same, for checks across keys in templates/validate.yaml.
refused_by_template() {
    lint=no refused "$@"
}

@test "unknown top-level key" {
    refused 'nodeset: {gpu: {replicas: 2}}' "additional properties 'nodeset' not allowed"
}

@test "unknown key inside a nodeset (typo)" {
    refused 'nodesets: {cpu: {replica: 3}}' "at '/nodesets/cpu'" "additional properties 'replica' not allowed"
}

@test "wrong type: privileged as a string" {
    refused 'nodesets: {cpu: {privileged: "yes"}}' "at '/nodesets/cpu/privileged'" "want boolean"
}

@test "wrong type: replicas as text, negative GPUs" {
    refused 'nodesets: {cpu: {replicas: "two"}}' "at '/nodesets/cpu/replicas'" "want integer"
    refused 'nodesets: {gpu: {gpus: -1}}' "at '/nodesets/gpu/gpus'" "minimum"
}

@test "nodeset name that cannot be a hostname part" {
    refused 'nodesets: {GPU_nodes: {gpus: 8}}' "'GPU_nodes' does not match pattern"
}

@test "login Service type not one Kubernetes knows" {
    refused 'login: {service: {type: Ingress}}' "at '/login/service/type'" "ClusterIP"
}

@test "nodePort without type NodePort" {
    refused 'login: {service: {nodePort: 30022}}' "at '/login/service/type'" "value must be 'NodePort'"
}

@test "loadBalancerSourceRanges without type LoadBalancer" {
    refused 'login: {service: {loadBalancerSourceRanges: [10.0.0.0/8]}}' "at '/login/service/type'" "value must be 'LoadBalancer'"
}

@test "jail volume without ReadWriteMany" {
    refused 'jail: {persistence: {accessModes: [ReadWriteOnce]}}' "at '/jail/persistence/accessModes'"
}

@test "accounting with neither MariaDB nor an external database" {
    refused 'accounting: {enabled: true}' "at '/accounting/external/host'" "at '/accounting/external/passwordSecret'"
}

@test "unknown plugin setting in plugin.extraArgs" {
    refused 'plugin: {extraArgs: [jial=/srv/jail]}' "at '/plugin/extraArgs/0'" "does not match pattern"
}

@test "GPU driver mode or driver root chroot.so would refuse" {
    refused 'nodesets: {gpu: {gpus: 8, gpuDriver: yes}}' "at '/nodesets/gpu/gpuDriver'"
    refused 'nodesets: {gpu: {gpus: 8, gpuDriverRoot: run/nvidia/driver}}' "at '/nodesets/gpu/gpuDriverRoot'" "does not match pattern"
    refused 'plugin: {extraArgs: [gpu=]}' "at '/plugin/extraArgs/0'" "does not match pattern"
}

@test "authorized key that is not an SSH public key" {
    refused 'login: {authorizedKeys: {alice: ["-----BEGIN OPENSSH PRIVATE KEY-----"]}}' "at '/login/authorizedKeys/alice/0'"
}

@test "NCCL CronJob schedule that is not a cron expression" {
    refused 'healthChecks: {nccl: {schedule: "every sunday"}}' "at '/healthChecks/nccl/schedule'"
}

@test "health.conf setting that is not a long option name" {
    refused 'healthChecks: {gpuCheck: {"Drain After": 2}}' "'Drain After' does not match pattern"
}

@test "Grafana dashboard ConfigMap: a label, label value or namespace Kubernetes refuses, an unknown key" {
    refused 'healthChecks: {grafanaDashboard: {sidecarLabel: "grafana dashboard"}}' "at '/healthChecks/grafanaDashboard/sidecarLabel'"
    refused 'healthChecks: {grafanaDashboard: {sidecarLabelValue: 1}}' "at '/healthChecks/grafanaDashboard/sidecarLabelValue'"
    refused 'healthChecks: {grafanaDashboard: {namespace: Monitoring}}' "at '/healthChecks/grafanaDashboard/namespace'"
    refused 'healthChecks: {grafanaDashboard: {folder: Slurm}}' "additional properties 'folder' not allowed"
}

@test "partition naming a nodeset that does not exist" {
    refused_by_template 'partitions: [{name: gpu, nodesets: [h100]}]' \
        'partitions[0] (gpu): nodeset "h100" is not an enabled entry of nodesets (enabled: cpu)'
}

@test "two default partitions" {
    refused_by_template 'partitions: [{name: a, nodesets: [cpu], default: true}, {name: b, nodesets: [cpu], default: true}]' \
        "partitions: more than one partition has default: true"
}

@test "NCCL check enabled without any GPU nodeset" {
    refused_by_template 'healthChecks: {nccl: {enabled: true}}' "healthChecks.nccl.enabled is true but no enabled nodeset has gpus > 0"
}

@test "authorized keys while login is disabled" {
    refused_by_template 'login: {enabled: false, authorizedKeys: {root: ["ssh-ed25519 AAAA x"]}}' "login.authorizedKeys is set but login.enabled is false"
}

@test "nodeset arch that is not amd64 or arm64" {
    refused 'nodesets: {cpu: {arch: riscv64}}' "at '/nodesets/cpu/arch'" "value must be one of 'amd64', 'arm64'"
    refused 'nodesetDefaults: {arch: x86_64}' "at '/nodesetDefaults/arch'" "'amd64', 'arm64'"
}

@test "arm64 jail settings of the wrong type" {
    refused 'jail: {arm64: {persistence: {size: fifty}}}' "at '/jail/arm64/persistence/size'"
    refused 'jail: {arm64: {populate: {enabled: true}}}' "additional properties 'enabled' not allowed"
}

@test "an arm64 nodeset that nothing would give an arm64 jail" {
    refused_by_template 'nodesets: {cpu: {}, grace: {arch: arm64}}
jail: {populate: {enabled: false}, persistence: {existingClaim: my-jail}}' \
        'nodesets grace run on arm64, but nothing would fill an arm64 jail: jail.populate.enabled is false and jail.arm64.persistence.existingClaim is empty'
}

@test "the amd64 jail given as the arm64 one" {
    refused_by_template 'nodesets: {grace: {arch: arm64}}
jail: {arm64: {persistence: {existingClaim: t-slurm-cluster-jail}}}' \
        'jail.arm64.persistence.existingClaim: "t-slurm-cluster-jail" is the amd64 jail'"'"'s claim; nodesets grace need a jail of their own, whose programs are built for arm64'
    refused_by_template 'nodesets: {grace: {arch: arm64}}
jail: {persistence: {existingClaim: kept-jail}, arm64: {persistence: {existingClaim: kept-jail}}}' \
        'jail.arm64.persistence.existingClaim: "kept-jail" is the amd64 jail'"'"'s claim'
}

@test "a kubernetes.io/arch node selector against the architecture" {
    refused_by_template 'nodesets: {grace: {arch: arm64, nodeSelector: {kubernetes.io/arch: amd64}}}' \
        'nodesets.grace.nodeSelector: kubernetes.io/arch is "amd64" but the nodeset'"'"'s arch is "arm64"; set nodesets.grace.arch: amd64 instead'
    refused_by_template 'nodesets: {cpu: {nodeSelector: {kubernetes.io/arch: arm64}}}' \
        'nodesets.cpu.nodeSelector: kubernetes.io/arch is "arm64" but the nodeset'"'"'s arch is "amd64"'
    refused_by_template 'nodesets: {grace: {arch: arm64}}
controller: {nodeSelector: {kubernetes.io/arch: arm64}}' \
        'controller.nodeSelector: kubernetes.io/arch is "arm64", but the controller runs on amd64'
}

@test "the good values next to each bad case render" {
    printf '%s\n' 'nodesets: {cpu: {replicas: 3, privileged: true}, gpu: {gpus: 8}}' \
        'partitions: [{name: gpu, nodesets: [cpu, gpu], default: true}]' \
        'login: {service: {type: NodePort, nodePort: 30022}, authorizedKeys: {alice: ["ssh-ed25519 AAAA x"]}}' \
        'plugin: {extraArgs: [bind=/srv/data, gpu=off, gpu_mps_dir=/run/mps, build_timeout=60]}' \
        'healthChecks: {nccl: {enabled: true, schedule: "0 3 * * 0"}, grafanaDashboard: {enabled: true, sidecarLabel: example.com/dashboard, sidecarLabelValue: "yes", namespace: monitoring}}' \
        'accounting: {enabled: true, mariadb: {enabled: true}}' >"$BATS_TEST_TMPDIR/good.yaml"
    run "$helm_bin" template t "$chart" -f "$BATS_TEST_TMPDIR/good.yaml"
    assert_success
    # the architecture cases' good neighbours
    printf '%s\n' 'nodesets: {cpu: {nodeSelector: {kubernetes.io/arch: amd64}}, grace: {arch: arm64, nodeSelector: {kubernetes.io/arch: arm64}}}' \
        'jail: {populate: {enabled: false}, persistence: {existingClaim: my-jail}, arm64: {persistence: {existingClaim: my-arm64-jail, size: ""}}}' \
        'controller: {nodeSelector: {kubernetes.io/arch: amd64}}' >"$BATS_TEST_TMPDIR/good.yaml"
    run "$helm_bin" template t "$chart" -f "$BATS_TEST_TMPDIR/good.yaml"
    assert_success
}

@test "slurm.release the images are not built for" {
    refused_by_template 'slurm: {release: "23.11"}' 'slurm.release: "23.11" is not a Slurm release this chart runs; supported: 22.05, 24.11, 26.05'
    refused_by_template 'slurm: {release: ""}' 'slurm.release: "" is not a Slurm release'
    refused 'slurm: {release: [24.11]}' "at '/slurm/release'"
    refused 'slurm: {version: "24.11"}' "additional properties 'version' not allowed"
}

@test "fabric CronJob: a schedule that is not cron, an unknown key, a bad section key" {
    refused 'healthChecks: {ncclFabric: {schedule: "every monday"}}' "at '/healthChecks/ncclFabric/schedule'"
    refused 'healthChecks: {ncclFabric: {threshold: 1}}' "additional properties 'threshold' not allowed"
    refused 'healthChecks: {ncclFabric: {fabric: {"Max Drain": 1}}}' "'Max Drain' does not match pattern"
    refused 'healthChecks: {gate: "yes"}' "at '/healthChecks/gate'"
}

@test "fabric CronJob or gate without any GPU nodeset; gate keys set by hand" {
    refused_by_template 'healthChecks: {ncclFabric: {enabled: true}}' "healthChecks.ncclFabric.enabled is true but no enabled nodeset has gpus > 0"
    refused_by_template 'healthChecks: {gate: true}' "healthChecks.gate is true but no enabled nodeset has gpus > 0"
    refused_by_template 'healthChecks: {gpuCheck: {gate-dir: /x}}' "healthChecks: gate-dir is set by healthChecks.gate"
}
