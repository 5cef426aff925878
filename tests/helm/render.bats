#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns and in-container scripts
# Assertions on the rendered objects: the parts users rely on.

load helpers

setup_file() {
    require_helm_tools "$root" kubernetes-models
    export R=$BATS_FILE_TMPDIR
    render_validated "$R/default.json"
    render_validated "$R/gpu.json" -f "$chart/examples/gpu-two-nodesets.yaml"
    render_validated "$R/acct.json" -f "$chart/examples/accounting.yaml"
    render_validated "$R/acct-ext.json" -f "$chart/examples/accounting-external.yaml"
    render_validated "$R/lb.json" -f "$chart/examples/loadbalancer-login.yaml"
    render_validated "$R/cpu.json" -f "$chart/examples/cpu-only.yaml"
}

@test "plugstack.conf holds exactly the contract's plugin line" {
    want=$(sed -n 's/^    \(required chroot.so .*\)$/\1/p' "$root/docs/contract.md")
    [ "$want" = "required chroot.so jail=/mnt/jail" ]
    run cm_data "$R/default.json" t-slurm-cluster-slurm-config plugstack.conf
    assert_success
    assert_output "$want"
}

@test "plugstack.conf appends the configured plugin extras" {
    run cm_data "$R/gpu.json" t-slurm-cluster-slurm-config plugstack.conf
    # with the NCCL check on, its jobs (in the jail) see health.conf
    assert_output "required chroot.so jail=/mnt/jail bind=/etc/slurm-jail:/etc/slurm-jail:ro bind=/dev/infiniband"
    run cm_data "$R/lb.json" t-slurm-cluster-slurm-config plugstack.conf
    assert_output "required chroot.so jail=/mnt/jail"
    render_validated "$BATS_TEST_TMPDIR/x.json" --set-string plugin.extraConfig=$'optional other.so x=1\ninclude /etc/slurm/plugstack.d/*.conf'
    run cm_data "$BATS_TEST_TMPDIR/x.json" t-slurm-cluster-slurm-config plugstack.conf
    assert_output $'required chroot.so jail=/mnt/jail\noptional other.so x=1\ninclude /etc/slurm/plugstack.d/*.conf'
}

# volume_of FILE STATEFULSET NAME: one volume of its pod template.
volume_of() {
    obj "$1" StatefulSet "$2" | jq -ec --arg v "$3" '.spec.template.spec.volumes[] | select(.name == $v)'
}

@test "GPU nodesets: their own plugin line requires the node's driver (gpu=on), seen by their workers as plugstack.conf" {
    run cm_data "$R/gpu.json" t-slurm-cluster-slurm-config plugstack-h100.conf
    assert_output "required chroot.so jail=/mnt/jail bind=/etc/slurm-jail:/etc/slurm-jail:ro bind=/dev/infiniband gpu=on"
    run cm_data "$R/gpu.json" t-slurm-cluster-slurm-config plugstack-a100.conf
    assert_output "required chroot.so jail=/mnt/jail bind=/etc/slurm-jail:/etc/slurm-jail:ro bind=/dev/infiniband gpu=on"
    run cm_data "$R/gpu.json" t-slurm-cluster-slurm-config plugstack-cpu.conf
    assert_failure
    run volume_of "$R/gpu.json" t-slurm-cluster-h100 slurm-config
    assert_output '{"name":"slurm-config","configMap":{"name":"t-slurm-cluster-slurm-config","items":[{"key":"slurm.conf","path":"slurm.conf"},{"key":"plugstack-h100.conf","path":"plugstack.conf"},{"key":"gres.conf","path":"gres.conf"}]}}'
    run volume_of "$R/gpu.json" t-slurm-cluster-cpu slurm-config
    assert_output '{"name":"slurm-config","configMap":{"name":"t-slurm-cluster-slurm-config"}}'
    # The container toolkit puts CUDA and NVML into GPU workers only.
    obj "$R/gpu.json" StatefulSet t-slurm-cluster-h100 |
        jq -e '[.spec.template.spec.containers[0].env[] | select(.name == "NVIDIA_DRIVER_CAPABILITIES") | .value] == ["compute,utility"]' >/dev/null
    obj "$R/gpu.json" StatefulSet t-slurm-cluster-cpu |
        jq -e '[.spec.template.spec.containers[0].env[] | select(.name == "NVIDIA_DRIVER_CAPABILITIES")] == []' >/dev/null
}

@test "GPU nodesets: gpuDriverRoot mounts the node's driver root and names it; gpuDriver overrides the mode and plugin.extraArgs" {
    render_validated "$BATS_TEST_TMPDIR/x.json" \
        --set nodesets.gpu.gpus=8 --set nodesets.gpu.gpuDriverRoot=/run/nvidia/driver \
        --set nodesets.old.gpus=4 --set nodesets.old.gpuDriver=off \
        --set nodesets.cpu.gpuDriver=auto --set 'plugin.extraArgs={gpu=off,bind=/srv}' \
        --set 'partitions[0].name=main' --set 'partitions[0].nodesets={cpu,gpu,old}'
    run cm_data "$BATS_TEST_TMPDIR/x.json" t-slurm-cluster-slurm-config plugstack.conf
    assert_output "required chroot.so jail=/mnt/jail gpu=off bind=/srv"
    run cm_data "$BATS_TEST_TMPDIR/x.json" t-slurm-cluster-slurm-config plugstack-gpu.conf
    assert_output "required chroot.so jail=/mnt/jail bind=/srv gpu=on gpu_driver_root=/run/nvidia/driver"
    run cm_data "$BATS_TEST_TMPDIR/x.json" t-slurm-cluster-slurm-config plugstack-old.conf
    assert_output "required chroot.so jail=/mnt/jail bind=/srv gpu=off"
    run cm_data "$BATS_TEST_TMPDIR/x.json" t-slurm-cluster-slurm-config plugstack-cpu.conf
    assert_output "required chroot.so jail=/mnt/jail bind=/srv gpu=auto"
    run volume_of "$BATS_TEST_TMPDIR/x.json" t-slurm-cluster-gpu nvidia-driver
    assert_output '{"name":"nvidia-driver","hostPath":{"path":"/run/nvidia/driver","type":"Directory"}}'
    obj "$BATS_TEST_TMPDIR/x.json" StatefulSet t-slurm-cluster-gpu |
        jq -e '.spec.template.spec.containers[0].volumeMounts[] | select(.name == "nvidia-driver") | .mountPath == "/run/nvidia/driver" and .readOnly' >/dev/null
    run volume_of "$BATS_TEST_TMPDIR/x.json" t-slurm-cluster-old nvidia-driver
    assert_failure
}

@test "NCCL check jobs: the jail has the program and the mount point for health.conf; output kept in root's home" {
    grep -q '^COPY --from=build /out/usr/sbin/slurm-jail-nccl-check /usr/sbin/slurm-jail-nccl-check$' "$root/images/jail/Containerfile"
    grep -q '/etc/slurm-jail ' "$root/images/jail/finalize-rootfs"
    obj "$R/gpu.json" CronJob t-slurm-cluster-nccl-check | jq -e '.spec.jobTemplate.spec.template.spec.containers[0].workingDir == "/tmp"' >/dev/null
    obj "$R/gpu.json" CronJob t-slurm-cluster-nccl-check | jq -e '.spec.jobTemplate.spec.template.spec.containers[0].command | index("--sbatch-arg=--output=/root/nccl-check-%N-%j.out") == 2' >/dev/null
}

# dynamic_conf FILE STATEFULSET: the node-line parameters its pods register with.
dynamic_conf() {
    obj "$1" StatefulSet "$2" | jq -er '.spec.template.spec.containers[0].env[] | select(.name == "SLURMD_DYNAMIC_CONF") | .value'
}

@test "slurm.conf: no node lines; workers register as dynamic nodes with their nodeset's features, GRES, CPUs and memory" {
    conf=$(cm_data "$R/gpu.json" t-slurm-cluster-slurm-config slurm.conf)
    run grep -c '^NodeName=' <<<"$conf"
    assert_output 0
    grep -qx 'MaxNodeCount=1024' <<<"$conf"
    grep -qx 'TreeWidth=65533' <<<"$conf"
    grep -qx 'SelectType=select/cons_tres' <<<"$conf" # dynamic nodes need it
    run grep '^NodeSet=' <<<"$conf"
    assert_output $'NodeSet=a100 Feature=nodeset-a100\nNodeSet=cpu Feature=nodeset-cpu\nNodeSet=h100 Feature=nodeset-h100'
    run dynamic_conf "$R/gpu.json" t-slurm-cluster-h100
    assert_output "Features=nodeset-h100,h100,nvlink Gres=gpu:8,nvme:1 CPUs=96 RealMemory=1000000"
    run dynamic_conf "$R/gpu.json" t-slurm-cluster-a100
    assert_output "Features=nodeset-a100,a100 Gres=gpu:4"
    run dynamic_conf "$R/gpu.json" t-slurm-cluster-cpu
    assert_output "Features=nodeset-cpu"
    run dynamic_conf "$R/cpu.json" t-slurm-cluster-cpu
    assert_output "Features=nodeset-cpu,avx512,epyc CPUs=32 RealMemory=60000"
    # every GRES a node registers with is a GresType
    grep -qx 'GresTypes=gpu,nvme' <<<"$conf"
    run grep -c '^GresTypes=' <(cm_data "$R/default.json" t-slurm-cluster-slurm-config slurm.conf)
    assert_output 0
}

@test "scaling a nodeset changes no Slurm config file and does not restart slurmctld" {
    render_validated "$BATS_TEST_TMPDIR/five.json" -f "$chart/examples/gpu-two-nodesets.yaml" --set nodesets.h100.replicas=5 --set nodesets.cpu.replicas=0
    [ "$(obj "$BATS_TEST_TMPDIR/five.json" ConfigMap t-slurm-cluster-slurm-config | jq -c .data)" = "$(obj "$R/gpu.json" ConfigMap t-slurm-cluster-slurm-config | jq -c .data)" ]
    [ "$(obj "$BATS_TEST_TMPDIR/five.json" ConfigMap t-slurm-cluster-scripts | jq -c .data)" = "$(obj "$R/gpu.json" ConfigMap t-slurm-cluster-scripts | jq -c .data)" ]
    checksum() { obj "$1" StatefulSet t-slurm-cluster-controller | jq -r '.spec.template.metadata.annotations["checksum/slurm-config"]'; }
    [ "$(checksum "$BATS_TEST_TMPDIR/five.json")" = "$(checksum "$R/gpu.json")" ]
    obj "$BATS_TEST_TMPDIR/five.json" StatefulSet t-slurm-cluster-h100 | jq -e '.spec.replicas == 5' >/dev/null
    # more pods than MaxNodeCount is refused with the fix named
    run "$helm_bin" template t "$chart" -n hpc --set slurmConfig.maxNodeCount=1
    assert_failure
    assert_output --partial "nodesets: 2 worker pods in all, more than slurmConfig.maxNodeCount (1); raise maxNodeCount"
}

@test "Slurm node names are the StatefulSet pod hostnames, each pod named under its nodeset's headless Service" {
    conf=$(cm_data "$R/gpu.json" t-slurm-cluster-slurm-config slurm.conf)
    run jq '[.[] | select(.kind == "StatefulSet" and .metadata.labels["app.kubernetes.io/component"] == "worker")] | length' "$R/gpu.json"
    assert_output 3
    for ss in $(jq -r '.[] | select(.kind == "StatefulSet" and .metadata.labels["app.kubernetes.io/component"] == "worker") | .metadata.name' "$R/gpu.json"); do
        replicas=$(obj "$R/gpu.json" StatefulSet "$ss" | jq -r .spec.replicas)
        svc=$(obj "$R/gpu.json" StatefulSet "$ss" | jq -r .spec.serviceName)
        # the governing Service exists, is headless and publishes unready pods
        obj "$R/gpu.json" Service "$svc" | jq -e '.spec.clusterIP == "None" and .spec.publishNotReadyAddresses == true' >/dev/null
        # its selector picks exactly this StatefulSet's pods
        obj "$R/gpu.json" Service "$svc" | jq -e --argjson l "$(obj "$R/gpu.json" StatefulSet "$ss" | jq .spec.template.metadata.labels)" \
            '.spec.selector | to_entries | all(.value == $l[.key])' >/dev/null
        # slurmd -N defaults to the hostname (pod <ss>-<i>): nothing overrides it
        obj "$R/gpu.json" StatefulSet "$ss" | jq -e '.spec.template.spec.containers[0].env | all(.name != "SLURM_NODENAME")' >/dev/null
        obj "$R/gpu.json" StatefulSet "$ss" | jq -e '.spec.template.spec | (has("hostname") or has("subdomain")) | not' >/dev/null
        [ "$replicas" -gt 0 ]
        # no pod of the nodeset is named in the Slurm config
        run grep -c "$ss-[0-9]" <<<"$conf"
        assert_output 0
    done
    grep -q 'SLURM_NODENAME:-$(hostname)' "$root/images/worker/slurm-jail-entrypoint"
}

@test "slurm.conf partition lines select their nodesets (NodeSet by feature)" {
    conf=$(cm_data "$R/gpu.json" t-slurm-cluster-slurm-config slurm.conf)
    run grep '^PartitionName=' <<<"$conf"
    assert_output - <<'OUT'
PartitionName=cpu Nodes=cpu Default=YES
PartitionName=gpu Nodes=h100,a100 MaxTime=INFINITE State=UP
OUT
    conf=$(cm_data "$R/default.json" t-slurm-cluster-slurm-config slurm.conf)
    run grep '^PartitionName=' <<<"$conf"
    assert_output "PartitionName=main Nodes=cpu Default=YES MaxTime=INFINITE State=UP"
}

@test "slurm.conf: controller host, ports and paths from docs/contract.md" {
    conf=$(cm_data "$R/default.json" t-slurm-cluster-slurm-config slurm.conf)
    grep -qx 'SlurmctldHost=t-slurm-cluster-controller-0(t-slurm-cluster-controller-0.t-slurm-cluster-controller.hpc.svc.cluster.local)' <<<"$conf"
    grep -qx 'SlurmctldPort=6817' <<<"$conf"
    grep -qx 'SlurmdPort=6818' <<<"$conf"
    grep -qx 'StateSaveLocation=/var/spool/slurmctld' <<<"$conf"
    grep -qx 'SlurmdSpoolDir=/var/spool/slurmd' <<<"$conf"
    grep -qx 'PlugStackConfig=/etc/slurm/plugstack.conf' <<<"$conf"
    grep -qx 'ClusterName=t' <<<"$conf"
    # the controller StatefulSet's pod 0 is that host, under that Service
    obj "$R/default.json" StatefulSet t-slurm-cluster-controller | jq -e '.spec.serviceName == "t-slurm-cluster-controller" and .spec.replicas == 1' >/dev/null
    obj "$R/default.json" Service t-slurm-cluster-controller | jq -e '.spec.clusterIP == "None" and .spec.ports[0].port == 6817' >/dev/null
}

@test "slurm.conf: the job container jails what slurmd serves itself, unless turned off" {
    conf=$(cm_data "$R/default.json" t-slurm-cluster-slurm-config slurm.conf)
    grep -qx 'JobContainerType=job_container/slurm_jail' <<<"$conf"
    grep -qx 'PrologFlags=Contain' <<<"$conf"
    render_validated "$BATS_TEST_TMPDIR/x.json" --set slurmConfig.jobContainer=false
    conf=$(cm_data "$BATS_TEST_TMPDIR/x.json" t-slurm-cluster-slurm-config slurm.conf)
    run grep -E '^(JobContainerType|PrologFlags)=' <<<"$conf"
    assert_failure
}

@test "slurm.conf: extraConfig lines are appended verbatim" {
    conf=$(cm_data "$R/cpu.json" t-slurm-cluster-slurm-config slurm.conf)
    run tail -1 <<<"$conf"
    assert_output "SchedulerParameters=bf_continue"
}

@test "jailCheck off: HealthCheckProgram only when a nodeset has GPUs, and it runs the GPU check only on those nodes" {
    render_validated "$BATS_TEST_TMPDIR/gpu.json" -f "$chart/examples/gpu-two-nodesets.yaml" --set healthChecks.jailCheck=false
    render_validated "$BATS_TEST_TMPDIR/default.json" --set healthChecks.jailCheck=false
    conf=$(cm_data "$BATS_TEST_TMPDIR/gpu.json" t-slurm-cluster-slurm-config slurm.conf)
    grep -qx 'HealthCheckProgram=/opt/slurm-jail-chart/health-check' <<<"$conf"
    grep -qx 'HealthCheckInterval=600' <<<"$conf"
    grep -qx 'HealthCheckNodeState=ANY,CYCLE' <<<"$conf"
    run grep -c '^HealthCheck' <(cm_data "$BATS_TEST_TMPDIR/default.json" t-slurm-cluster-slurm-config slurm.conf)
    assert_output 0
    # the wrapper: run it for real with a fake check
    cm_data "$BATS_TEST_TMPDIR/gpu.json" t-slurm-cluster-scripts health-check >"$BATS_TEST_TMPDIR/hc"
    run grep -c fs-check "$BATS_TEST_TMPDIR/hc"
    assert_output 0
    printf '#!/bin/sh\necho "gpu-check ran on $SLURMD_NODENAME"\nexit 3\n' >"$BATS_TEST_TMPDIR/fake-check"
    chmod +x "$BATS_TEST_TMPDIR/hc" "$BATS_TEST_TMPDIR/fake-check"
    export SLURM_JAIL_GPU_CHECK=$BATS_TEST_TMPDIR/fake-check
    SLURMD_NODENAME=t-slurm-cluster-h100-3 run "$BATS_TEST_TMPDIR/hc"
    assert_failure 3 # the check's verdict is passed through
    assert_output "gpu-check ran on t-slurm-cluster-h100-3"
    # any ordinal: pods added by scaling are checked too
    SLURMD_NODENAME=t-slurm-cluster-h100-30 run "$BATS_TEST_TMPDIR/hc"
    assert_failure 3
    for n in t-slurm-cluster-cpu-0 t-slurm-cluster-a100-0 t-slurm-cluster-h100 t-slurm-cluster-h100- t-slurm-cluster-h100-x1 t-slurm-cluster-h100-1-0 ""; do
        SLURMD_NODENAME=$n run "$BATS_TEST_TMPDIR/hc"
        assert_success # a100 has gpuHealthCheck false; the others are no h100 pods
        assert_output ""
    done
    shellcheck -s sh "$BATS_TEST_TMPDIR/hc"
}

@test "the GPU check path comes from healthChecks.gpuCheckCommand" {
    run cm_data "$R/gpu.json" t-slurm-cluster-scripts health-check
    assert_output --partial '"${SLURM_JAIL_GPU_CHECK:-/usr/sbin/slurm-jail-gpu-check}"; gpu=$?'
    render_validated "$BATS_TEST_TMPDIR/p.json" -f "$chart/examples/gpu-two-nodesets.yaml" --set healthChecks.gpuCheckCommand=/opt/site/gpu-check
    run cm_data "$BATS_TEST_TMPDIR/p.json" t-slurm-cluster-scripts health-check
    assert_output --partial '"${SLURM_JAIL_GPU_CHECK:-/opt/site/gpu-check}"; gpu=$?'
    render_validated "$BATS_TEST_TMPDIR/off.json" -f "$chart/examples/gpu-two-nodesets.yaml" --set healthChecks.gpuCheckCommand=/opt/site/gpu-check --set healthChecks.jailCheck=false
    run cm_data "$BATS_TEST_TMPDIR/off.json" t-slurm-cluster-scripts health-check
    assert_output --partial 'exec "${SLURM_JAIL_GPU_CHECK:-/opt/site/gpu-check}"'
}

@test "gres.conf: one gpu line per GPU nodeset" {
    run cm_data "$R/gpu.json" t-slurm-cluster-slurm-config gres.conf
    # every pod the nodeset may ever have (MaxNodeCount), whatever its replicas
    assert_line "NodeName=t-slurm-cluster-a100-[0-1023] Name=gpu File=/dev/nvidia[0-3]"
    assert_line "NodeName=t-slurm-cluster-h100-[0-1023] Name=gpu File=/dev/nvidia[0-7]"
}

@test "cgroup.conf is rendered only when a cgroup plugin is used" {
    run cm_data "$R/default.json" t-slurm-cluster-slurm-config cgroup.conf
    assert_failure
    run cm_data "$R/cpu.json" t-slurm-cluster-slurm-config cgroup.conf
    assert_success
    assert_line "ConstrainRAMSpace=yes"
}

@test "health.conf: one section per health program, settings and NCCL thresholds in theirs" {
    run cm_data "$R/gpu.json" t-slurm-cluster-health-config health.conf
    assert_output --partial $'[gpu-check]\ndrain-after = 2\nmetrics-file = /var/lib/node_exporter/textfile/slurm_jail_gpu.prom\n[fs-check]\n[nccl-check]\nthreshold = A100x4=180\nthreshold = H100x8=400\ntimeout = 900\n[nccl-submit]\npartition = gpu\nsbatch-arg = --time=30'
    run cm_data "$R/default.json" t-slurm-cluster-health-config health.conf
    assert_output --partial $'[gpu-check]\n[fs-check]\n[nccl-check]\n[nccl-submit]\n[nccl-fabric]'
}

@test "NCCL CronJob: schedule, suspend, Forbid, deadline, driver and health.conf from values" {
    run obj "$R/default.json" CronJob t-slurm-cluster-nccl-check
    assert_failure # off by default
    cj=$(obj "$R/gpu.json" CronJob t-slurm-cluster-nccl-check)
    jq -e '.spec.schedule == "30 2 * * 6"' <<<"$cj" >/dev/null
    jq -e '.spec.suspend == false and .spec.concurrencyPolicy == "Forbid"' <<<"$cj" >/dev/null
    jq -e '.spec.jobTemplate.spec.activeDeadlineSeconds == 10800' <<<"$cj" >/dev/null
    jq -e '.spec.jobTemplate.spec.template.spec.containers[0].command == ["/opt/slurm-jail-chart/with-munge", "/usr/sbin/slurm-jail-nccl-submit", "--sbatch-arg=--output=/root/nccl-check-%N-%j.out"]' <<<"$cj" >/dev/null
    jq -e '.spec.jobTemplate.spec.template.spec.containers[0].volumeMounts | any(.mountPath == "/etc/slurm-jail" and .name == "health-config")' <<<"$cj" >/dev/null
    render_validated "$BATS_TEST_TMPDIR/s.json" -f "$chart/examples/gpu-two-nodesets.yaml" --set healthChecks.nccl.suspend=true --set-string healthChecks.nccl.schedule="@daily"
    obj "$BATS_TEST_TMPDIR/s.json" CronJob t-slurm-cluster-nccl-check | jq -e '.spec.suspend == true and .spec.schedule == "@daily"' >/dev/null
}

@test "workers: exactly CAP_SYS_ADMIN and CAP_SYS_CHROOT, unmasked /proc, own user namespace, not privileged" {
    for ss in t-slurm-cluster-cpu t-slurm-cluster-h100; do
        spec=$(obj "$R/gpu.json" StatefulSet "$ss" | jq .spec.template.spec)
        jq -e '.hostUsers == false' <<<"$spec" >/dev/null
        jq -e '.containers[0].securityContext == {"privileged": false, "procMount": "Unmasked", "capabilities": {"add": ["SYS_ADMIN", "SYS_CHROOT"]}}' <<<"$spec" >/dev/null ||
            fail "$ss: $(jq -c .containers[0].securityContext <<<"$spec")"
    done
}

@test "workers: privileged only when asked for, and then without hostUsers/procMount" {
    spec=$(obj "$R/lb.json" StatefulSet t-slurm-cluster-cpu | jq .spec.template.spec)
    jq -e 'has("hostUsers") | not' <<<"$spec" >/dev/null
    jq -e '.containers[0].securityContext == {"privileged": true}' <<<"$spec" >/dev/null
}

@test "login: CAP_SYS_ADMIN and an unmasked /proc for pam_slurm_jail.so, own user namespace; privileged when asked for" {
    spec=$(obj "$R/default.json" StatefulSet t-slurm-cluster-login | jq .spec.template.spec)
    jq -e '.hostUsers == false' <<<"$spec" >/dev/null
    jq -e '.containers[0].securityContext == {"procMount": "Unmasked", "capabilities": {"add": ["SYS_ADMIN"]}}' <<<"$spec" >/dev/null ||
        fail "login: $(jq -c .containers[0].securityContext <<<"$spec")"
    render_validated "$BATS_TEST_TMPDIR/p.json" --set-json 'login.securityContext={"privileged":true}'
    spec=$(obj "$BATS_TEST_TMPDIR/p.json" StatefulSet t-slurm-cluster-login | jq .spec.template.spec)
    jq -e 'has("hostUsers") | not' <<<"$spec" >/dev/null
    jq -e '.containers[0].securityContext == {"privileged": true}' <<<"$spec" >/dev/null
}

@test "workers: GPUs, resources, node selector, tolerations and extra volumes per nodeset" {
    spec=$(obj "$R/gpu.json" StatefulSet t-slurm-cluster-h100 | jq .spec)
    jq -e '.replicas == 4' <<<"$spec" >/dev/null
    c=$(jq .template.spec.containers[0] <<<"$spec")
    jq -e '.resources.limits["nvidia.com/gpu"] == 8 and .resources.requests["nvidia.com/gpu"] == 8 and .resources.requests.cpu == "90"' <<<"$c" >/dev/null
    jq -e '.template.spec.nodeSelector["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"' <<<"$spec" >/dev/null
    jq -e '.template.spec.tolerations[0].key == "nvidia.com/gpu"' <<<"$spec" >/dev/null
    jq -e '.volumeMounts | any(.mountPath == "/dev/infiniband")' <<<"$c" >/dev/null
    # defaults merged per nodeset: cpu has no GPU and the default grace period
    cpu=$(obj "$R/gpu.json" StatefulSet t-slurm-cluster-cpu | jq .spec.template.spec)
    jq -e '(.containers[0].resources // {}) | has("limits") | not' <<<"$cpu" >/dev/null
    jq -e '.terminationGracePeriodSeconds == 630' <<<"$cpu" >/dev/null
    jq -e '.terminationGracePeriodSeconds == 3630' <<<"$(jq .template.spec <<<"$spec")" >/dev/null
}

@test "nodesetDefaults merge key by key: false and 0 in an entry win over the defaults" {
    render_validated "$BATS_TEST_TMPDIR/m.json" --set nodesetDefaults.privileged=true --set nodesets.cpu.privileged=false \
        --set nodesetDefaults.replicas=5 --set nodesets.other.replicas=0 --set 'partitions[0].name=main' --set 'partitions[0].nodesets={cpu,other}'
    obj "$BATS_TEST_TMPDIR/m.json" StatefulSet t-slurm-cluster-cpu | jq -e '.spec.replicas == 2 and .spec.template.spec.containers[0].securityContext.privileged == false' >/dev/null
    obj "$BATS_TEST_TMPDIR/m.json" StatefulSet t-slurm-cluster-other | jq -e '.spec.replicas == 0 and .spec.template.spec.containers[0].securityContext.privileged == true' >/dev/null
}

@test "preStop drains the node for the configured grace period; postStart resumes it" {
    c=$(obj "$R/gpu.json" StatefulSet t-slurm-cluster-h100 | jq .spec.template.spec.containers[0])
    jq -e '.lifecycle.preStop.exec.command == ["/opt/slurm-jail-chart/node-lifecycle", "drain", "3600"]' <<<"$c" >/dev/null
    jq -e '.lifecycle.postStart.exec.command == ["/opt/slurm-jail-chart/node-lifecycle", "resume"]' <<<"$c" >/dev/null
    jq -e '.volumeMounts | any(.mountPath == "/opt/slurm-jail-chart" and .name == "scripts")' <<<"$c" >/dev/null
    # the mounted script is the chart's file, executable
    diff <(cm_data "$R/gpu.json" t-slurm-cluster-scripts node-lifecycle) "$chart/files/node-lifecycle"
    obj "$R/gpu.json" StatefulSet t-slurm-cluster-h100 | jq -e '.spec.template.spec.volumes[] | select(.name == "scripts") | .configMap.defaultMode == 493' >/dev/null
}

@test "jail PVC (ReadWriteMany, pre-install hook, kept) mounted at /mnt/jail on workers, login and populate" {
    obj "$R/default.json" PersistentVolumeClaim t-slurm-cluster-jail | jq -e '.spec.accessModes == ["ReadWriteMany"] and .metadata.annotations["helm.sh/resource-policy"] == "keep" and .metadata.annotations["helm.sh/hook"] == "pre-install"' >/dev/null
    for o in "StatefulSet t-slurm-cluster-cpu" "StatefulSet t-slurm-cluster-login" "Job t-slurm-cluster-populate-jail"; do
        # shellcheck disable=SC2086
        obj "$R/default.json" $o | jq -e '.spec.template.spec as $s | $s.volumes[] | select(.persistentVolumeClaim.claimName == "t-slurm-cluster-jail") | .name as $v | $s.containers[0].volumeMounts | any(.name == $v and .mountPath == "/mnt/jail")' >/dev/null ||
            fail "$o does not mount the jail at /mnt/jail"
    done
    render_validated "$BATS_TEST_TMPDIR/e.json" --set jail.persistence.existingClaim=site-jail
    run jq -e '.[] | select(.kind == "PersistentVolumeClaim")' "$BATS_TEST_TMPDIR/e.json"
    assert_failure
    obj "$BATS_TEST_TMPDIR/e.json" StatefulSet t-slurm-cluster-cpu | jq -e '.spec.template.spec.volumes | any(.persistentVolumeClaim.claimName == "site-jail")' >/dev/null
}

@test "populate-jail Job: hook before install and upgrade, contract command line, preserve and dry-run" {
    job=$(obj "$R/cpu.json" Job t-slurm-cluster-populate-jail)
    jq -e '.metadata.annotations["helm.sh/hook"] == "pre-install,pre-upgrade"' <<<"$job" >/dev/null
    # the PVC hook comes first
    jq -e '(.metadata.annotations["helm.sh/hook-weight"] | tonumber) > -10' <<<"$job" >/dev/null
    # a volume with generations by default (jail.populate.generations)
    jq -e '.spec.template.spec.containers[0].args == ["--source", "/jail-rootfs", "--target", "/mnt/jail", "--preserve", "/opt/site", "--generations"]' <<<"$job" >/dev/null
    jq -e '.spec.template.spec.containers[0].image == "registry.example.com/hpc/slurm-jail/populate-jail:0.1.0-slurm24.11"' <<<"$job" >/dev/null
    render_validated "$BATS_TEST_TMPDIR/d.json" --set jail.populate.dryRun=true
    obj "$BATS_TEST_TMPDIR/d.json" Job t-slurm-cluster-populate-jail | jq -e '.spec.template.spec.containers[0].args[-1] == "--dry-run"' >/dev/null
}

@test "login: Service types, host keys and authorized keys from Secrets at the contract's paths" {
    obj "$R/default.json" Service t-slurm-cluster-login | jq -e '.spec.type == "ClusterIP" and .spec.ports[0].port == 22' >/dev/null
    obj "$R/lb.json" Service t-slurm-cluster-login | jq -e '.spec.type == "LoadBalancer" and .spec.loadBalancerSourceRanges == ["203.0.113.0/24"]' >/dev/null
    obj "$R/cpu.json" Service t-slurm-cluster-login | jq -e '.spec.type == "NodePort" and .spec.ports[0].nodePort == 30022' >/dev/null
    spec=$(obj "$R/lb.json" StatefulSet t-slurm-cluster-login | jq .spec)
    jq -e '.replicas == 2' <<<"$spec" >/dev/null
    jq -e '.template.spec.volumes[] | select(.name == "host-keys") | .secret.secretName == "t-slurm-cluster-ssh-host-keys"' <<<"$spec" >/dev/null
    jq -e '.template.spec.containers[0].volumeMounts | any(.name == "host-keys" and .mountPath == "/etc/ssh/host-keys")' <<<"$spec" >/dev/null
    jq -e '.template.spec.containers[0].volumeMounts | any(.name == "authorized-keys" and .mountPath == "/etc/ssh/authorized-keys")' <<<"$spec" >/dev/null
    keys=$(obj "$R/lb.json" Secret t-slurm-cluster-authorized-keys)
    jq -e '.stringData.bob == "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 bob@desk\necdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY= bob@phone\n"' <<<"$keys" >/dev/null
    jq -e '.stringData.alice | startswith("ssh-ed25519 ")' <<<"$keys" >/dev/null
}

@test "generated SSH host keys are real keys OpenSSH can load" {
    s=$(obj "$R/default.json" Secret t-slurm-cluster-ssh-host-keys)
    run jq -r '.data | keys[]' <<<"$s"
    assert_output $'ssh_host_ecdsa_key\nssh_host_rsa_key'
    for k in ecdsa rsa; do
        jq -r --arg k "ssh_host_${k}_key" '.data[$k]' <<<"$s" | base64 -d >"$BATS_TEST_TMPDIR/$k"
        chmod 600 "$BATS_TEST_TMPDIR/$k"
        run ssh-keygen -y -f "$BATS_TEST_TMPDIR/$k"
        assert_success
        assert_output --regexp '^(ecdsa-sha2-nistp256|ssh-rsa) AAAA'
    done
}

@test "munge key: 1024 random bytes in a Secret mounted where the entrypoints copy it from" {
    jq -r '.[] | select(.kind == "Secret" and .metadata.name == "t-slurm-cluster-munge") | .data["munge.key"]' "$R/default.json" | base64 -d >"$BATS_TEST_TMPDIR/k"
    [ "$(stat -c %s "$BATS_TEST_TMPDIR/k")" -eq 1024 ]
    for ss in t-slurm-cluster-controller t-slurm-cluster-cpu t-slurm-cluster-login; do
        obj "$R/default.json" StatefulSet "$ss" | jq -e '.spec.template.spec as $s | ($s.volumes[] | select(.secret.secretName == "t-slurm-cluster-munge") | .name) as $v | $s.containers[0].volumeMounts | any(.name == $v and .mountPath == "/etc/munge-secret")' >/dev/null ||
            fail "$ss does not mount the munge key at /etc/munge-secret"
    done
    render_validated "$BATS_TEST_TMPDIR/m.json" --set munge.existingSecret=site-munge
    run jq -e '.[] | select(.kind == "Secret" and .metadata.name == "t-slurm-cluster-munge")' "$BATS_TEST_TMPDIR/m.json"
    assert_failure
    obj "$BATS_TEST_TMPDIR/m.json" StatefulSet t-slurm-cluster-cpu | jq -e '.spec.template.spec.volumes | any(.secret.secretName == "site-munge")' >/dev/null
}

@test "no Secret data appears in any ConfigMap" {
    for f in "$R"/*.json; do
        # every secret value, decoded, longer than 8 characters
        jq -r '.[] | select(.kind == "Secret") | ((.data // {} | map_values(@base64d)) + (.stringData // {})) | .[]' "$f" |
            awk 'length > 8' | while IFS= read -r secret; do
                if jq -e --arg s "$secret" '.[] | select(.kind == "ConfigMap") | .data[] | select(contains($s))' "$f" >/dev/null; then
                    fail "$(basename "$f"): a Secret value appears in a ConfigMap"
                fi
            done
        # and no ConfigMap carries key material or a password setting
        run jq -r '.[] | select(.kind == "ConfigMap") | .data[]' "$f"
        refute_output --partial "PRIVATE KEY"
        refute_output --regexp "StoragePass *="
    done
}

@test "accounting: slurmdbd wired into slurm.conf, password only from a Secret" {
    conf=$(cm_data "$R/acct.json" t-slurm-cluster-slurm-config slurm.conf)
    grep -qx 'AccountingStorageType=accounting_storage/slurmdbd' <<<"$conf"
    grep -qx 'AccountingStorageHost=t-slurm-cluster-slurmdbd' <<<"$conf"
    run cm_data "$R/acct.json" t-slurm-cluster-slurmdbd slurmdbd.conf
    assert_line "StorageHost=t-slurm-cluster-mariadb"
    refute_output --partial "StoragePass"
    obj "$R/acct.json" StatefulSet t-slurm-cluster-slurmdbd | jq -e '.spec.template.spec.initContainers[0].env[0].valueFrom.secretKeyRef == {"name": "t-slurm-cluster-mariadb", "key": "password"}' >/dev/null
    obj "$R/acct.json" StatefulSet t-slurm-cluster-mariadb | jq -e '.spec.template.spec.containers[0].env | any(.name == "MARIADB_PASSWORD" and .valueFrom.secretKeyRef.name == "t-slurm-cluster-mariadb")' >/dev/null
    # external database: no MariaDB, the admin's Secret
    run jq -e '.[] | select(.metadata.name == "t-slurm-cluster-mariadb")' "$R/acct-ext.json"
    assert_failure
    run cm_data "$R/acct-ext.json" t-slurm-cluster-slurmdbd slurmdbd.conf
    assert_line "StorageHost=mysql.databases.svc.cluster.local"
    obj "$R/acct-ext.json" StatefulSet t-slurm-cluster-slurmdbd | jq -e '.spec.template.spec.initContainers[0].env[0].valueFrom.secretKeyRef == {"name": "slurm-db", "key": "password"}' >/dev/null
    # off by default
    run grep -c Accounting <(cm_data "$R/default.json" t-slurm-cluster-slurm-config slurm.conf)
    assert_output 0
}

@test "helm test hook: a Pod that runs a job with srun and checks it ran in the jail" {
    pod=$(obj "$R/default.json" Pod t-slurm-cluster-test-jail-job)
    jq -e '.metadata.annotations["helm.sh/hook"] == "test"' <<<"$pod" >/dev/null
    jq -e '.spec.containers[0].command == ["/opt/slurm-jail-chart/with-munge", "/opt/slurm-jail-chart/helm-test"]' <<<"$pod" >/dev/null
    run cm_data "$R/default.json" t-slurm-cluster-scripts helm-test
    assert_output --partial 'srun --nodes=1'
}

@test "standard labels on every object; extraObjects rendered through tpl" {
    run jq -r '.[] | select(.metadata.labels["app.kubernetes.io/managed-by"] != "Helm" or .metadata.labels["app.kubernetes.io/instance"] != "t" or (.metadata.labels["app.kubernetes.io/name"] | not)) | "\(.kind)/\(.metadata.name)"' "$R/default.json"
    assert_output ""
    obj "$R/lb.json" NetworkPolicy t-allow-ssh >/dev/null
}

@test "NOTES.txt tells how to SSH in, for each Service type" {
    run "$helm_bin" install t "$chart" --dry-run=client -n hpc -f "$chart/examples/loadbalancer-login.yaml"
    assert_success
    assert_output --partial 'ssh -p 22 <user>@$LOGIN_IP'
    run "$helm_bin" install t "$chart" --dry-run=client -n hpc
    assert_output --partial 'kubectl -n hpc port-forward svc/t-slurm-cluster-login 2222:22'
    assert_output --partial 'WARNING: login.authorizedKeys is empty'
    run "$helm_bin" install t "$chart" --dry-run=client -n hpc -f "$chart/examples/cpu-only.yaml"
    assert_output --partial 'ssh -p $NODE_PORT <user>@$NODE_IP'
}

@test "long release and nodeset names still give valid StatefulSet names and Slurm node hostnames" {
    "$helm_bin" template a-very-long-release-name-for-a-cluster "$chart" -n hpc \
        --set nodesets.abcdefghi-klmnopqrst.replicas=1000 --set nodesets.cpu.enabled=false \
        --set 'partitions[0].name=p' --set 'partitions[0].nodesets={abcdefghi-klmnopqrst}' >"$BATS_TEST_TMPDIR/long.yaml"
    node "$root/tests/helm/lib/k8s-validate.js" --json "$BATS_TEST_TMPDIR/long.json" <"$BATS_TEST_TMPDIR/long.yaml"
    run jq -r '.[] | select(.kind == "StatefulSet") | .metadata.name | select(length > 52)' "$BATS_TEST_TMPDIR/long.json"
    assert_output ""
    # the last pod's hostname is its Slurm node name
    last=$(jq -r '.[] | select(.kind == "StatefulSet" and .spec.replicas == 1000) | "\(.metadata.name)-\(.spec.replicas - 1)"' "$BATS_TEST_TMPDIR/long.json")
    [ "${#last}" -le 63 ]
    [[ "$last" =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?-abcdefghi-klmnopqrst-999$ ]]
}
