#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns and in-container scripts
# Mixed-architecture clusters (nodeset `arch`, chroot.so(8) ARCHITECTURES):
# one jail per architecture, the users' homes of the default (amd64) jail
# bound into the arm64 one, every pod on its architecture; and a
# single-architecture cluster rendered exactly as before.

load helpers
load lib/golden

setup_file() {
    require_helm_tools "$root" kubernetes-models
    export R=$BATS_FILE_TMPDIR
    render_validated "$R/mixed.json" -f "$chart/examples/mixed-arch.yaml"
}

teardown() {
    local pid=$BATS_TEST_TMPDIR/pid
    if [ -f "$pid" ]; then
        kill "$(cat "$pid")" 2>/dev/null || true
        wait "$(cat "$pid")" 2>/dev/null || true
    fi
}

# pod_spec FILE KIND NAME: the pod spec of a workload (CronJob: its job's).
pod_spec() {
    obj "$1" "$2" "$3" | jq -e '.spec.jobTemplate.spec.template.spec // .spec.template.spec // .spec'
}

# arch_of FILE KIND NAME: the pod's kubernetes.io/arch selector ("none" if absent).
arch_of() {
    pod_spec "$@" | jq -r '.nodeSelector["kubernetes.io/arch"] // "none"'
}

@test "golden: a single-architecture (amd64) cluster renders exactly as before, for the defaults and every example" {
    local n f count=0
    while read -r n f; do
        golden_render "$n" "$f" "$BATS_TEST_TMPDIR/$n.json" >/dev/null
        if [ -n "${SLURM_JAIL_GOLDEN_UPDATE:-}" ]; then
            cp "$BATS_TEST_TMPDIR/$n.json" "$golden_dir/$n.json"
        fi
        [ -f "$golden_dir/$n.json" ] || fail "no golden rendering $golden_dir/$n.json (see tests/helm/lib/golden.bash)"
        run diff -u "$golden_dir/$n.json" "$BATS_TEST_TMPDIR/$n.json"
        assert_success
        count=$((count + 1))
    done < <(golden_cases)
    [ "$count" -ge 7 ]
    # arch: amd64 given explicitly is the same as the default
    golden_render default - "$BATS_TEST_TMPDIR/d.json" >/dev/null
    render_validated "$BATS_TEST_TMPDIR/explicit.json" --set nodesets.cpu.arch=amd64 --set nodesetDefaults.arch=amd64
    jq -S 'map(if .kind == "Secret" and .metadata.annotations["helm.sh/resource-policy"] == "keep"
               then .data |= map_values("<generated>") else . end)' "$BATS_TEST_TMPDIR/explicit.json" >"$BATS_TEST_TMPDIR/e.json"
    diff -u "$BATS_TEST_TMPDIR/d.json" "$BATS_TEST_TMPDIR/e.json"
    # and no pod selects an architecture there
    run jq -r '.. | objects | select(has("nodeSelector")) | .nodeSelector | keys[]' "$BATS_TEST_TMPDIR/explicit.json"
    refute_output --partial kubernetes.io/arch
}

@test "mixed cluster: every pod that runs a slurm-jail image selects its architecture; the nodeset's own selector is kept" {
    run arch_of "$R/mixed.json" StatefulSet t-slurm-cluster-gh200
    assert_output arm64
    pod_spec "$R/mixed.json" StatefulSet t-slurm-cluster-gh200 |
        jq -e '.nodeSelector == {"kubernetes.io/arch": "arm64", "nvidia.com/gpu.product": "NVIDIA-GH200-480GB"}' >/dev/null
    for w in "StatefulSet t-slurm-cluster-cpu" "StatefulSet t-slurm-cluster-controller" "StatefulSet t-slurm-cluster-login" \
        "Job t-slurm-cluster-populate-jail" "Pod t-slurm-cluster-test-jail-job"; do
        # shellcheck disable=SC2086
        run arch_of "$R/mixed.json" $w
        assert_output amd64
    done
    run arch_of "$R/mixed.json" Job t-slurm-cluster-populate-jail-arm64
    assert_output arm64
    # slurmdbd and the NCCL CronJob run the amd64 worker image too
    render_validated "$BATS_TEST_TMPDIR/more.json" -f "$chart/examples/mixed-arch.yaml" --set accounting.enabled=true \
        --set accounting.mariadb.enabled=true --set healthChecks.nccl.enabled=true
    run arch_of "$BATS_TEST_TMPDIR/more.json" StatefulSet t-slurm-cluster-slurmdbd
    assert_output amd64
    run arch_of "$BATS_TEST_TMPDIR/more.json" CronJob t-slurm-cluster-nccl-check
    assert_output amd64
}

@test "mixed cluster: images: arm64 pods run <tag>-arm64, the others <tag>; overrides are used as they are" {
    pod_spec "$R/mixed.json" StatefulSet t-slurm-cluster-gh200 |
        jq -e '.containers[0].image == "registry.example.com/hpc/slurm-jail/worker:0.1.0-slurm24.11-arm64"' >/dev/null
    pod_spec "$R/mixed.json" Job t-slurm-cluster-populate-jail-arm64 |
        jq -e '.containers[0].image == "registry.example.com/hpc/slurm-jail/populate-jail:0.1.0-slurm24.11-arm64"' >/dev/null
    for w in "StatefulSet t-slurm-cluster-cpu worker" "StatefulSet t-slurm-cluster-controller worker" \
        "StatefulSet t-slurm-cluster-login login" "Job t-slurm-cluster-populate-jail populate-jail"; do
        set -- $w
        pod_spec "$R/mixed.json" "$1" "$2" |
            jq -e --arg i "registry.example.com/hpc/slurm-jail/$3:0.1.0-slurm24.11" '.containers[0].image == $i' >/dev/null ||
            fail "$2 does not run the amd64 $3 image"
    done
    # image.tag: the arm64 images are that tag plus -arm64
    render_validated "$BATS_TEST_TMPDIR/tag.json" -f "$chart/examples/mixed-arch.yaml" --set image.tag=site7
    pod_spec "$BATS_TEST_TMPDIR/tag.json" StatefulSet t-slurm-cluster-gh200 |
        jq -e '.containers[0].image == "registry.example.com/hpc/slurm-jail/worker:site7-arm64"' >/dev/null
    # a multi-arch manifest given as jail.populate.image serves both jails;
    # jail.arm64.populate.image wins for arm64; a nodeset's image is its own
    render_validated "$BATS_TEST_TMPDIR/o.json" -f "$chart/examples/mixed-arch.yaml" --set jail.populate.image=reg/pj:multi \
        --set nodesets.gh200.image=reg/worker:multi
    pod_spec "$BATS_TEST_TMPDIR/o.json" Job t-slurm-cluster-populate-jail-arm64 | jq -e '.containers[0].image == "reg/pj:multi"' >/dev/null
    pod_spec "$BATS_TEST_TMPDIR/o.json" Job t-slurm-cluster-populate-jail | jq -e '.containers[0].image == "reg/pj:multi"' >/dev/null
    pod_spec "$BATS_TEST_TMPDIR/o.json" StatefulSet t-slurm-cluster-gh200 | jq -e '.containers[0].image == "reg/worker:multi"' >/dev/null
    render_validated "$BATS_TEST_TMPDIR/o2.json" -f "$chart/examples/mixed-arch.yaml" --set jail.populate.image=reg/pj:amd64-only \
        --set jail.arm64.populate.image=reg/pj:arm64-only
    pod_spec "$BATS_TEST_TMPDIR/o2.json" Job t-slurm-cluster-populate-jail-arm64 | jq -e '.containers[0].image == "reg/pj:arm64-only"' >/dev/null
    pod_spec "$BATS_TEST_TMPDIR/o2.json" Job t-slurm-cluster-populate-jail | jq -e '.containers[0].image == "reg/pj:amd64-only"' >/dev/null
}

@test "mixed cluster: the arm64 jail PVC (no hook, kept, ReadWriteMany; its own size, the jail's StorageClass) beside the unchanged amd64 one" {
    obj "$R/mixed.json" PersistentVolumeClaim t-slurm-cluster-jail-arm64 | jq -e '
        .metadata.annotations == {"helm.sh/resource-policy": "keep"}
        and .metadata.labels["slurm-jail.io/arch"] == "arm64"
        and .spec.accessModes == ["ReadWriteMany"] and .spec.storageClassName == "cephfs"
        and .spec.resources.requests.storage == "50Gi"' >/dev/null
    obj "$R/mixed.json" PersistentVolumeClaim t-slurm-cluster-jail | jq -e '
        .metadata.annotations["helm.sh/hook"] == "pre-install" and .spec.resources.requests.storage == "200Gi"' >/dev/null
    run jq -r '[.[] | select(.kind == "PersistentVolumeClaim") | .metadata.name] | sort | join(" ")' "$R/mixed.json"
    assert_output "t-slurm-cluster-jail t-slurm-cluster-jail-arm64"
    # size and StorageClass default to the amd64 jail's
    render_validated "$BATS_TEST_TMPDIR/d.json" -f "$chart/examples/mixed-arch.yaml" --set jail.arm64.persistence.size= \
        --set jail.arm64.persistence.storageClassName=fast
    obj "$BATS_TEST_TMPDIR/d.json" PersistentVolumeClaim t-slurm-cluster-jail-arm64 |
        jq -e '.spec.resources.requests.storage == "200Gi" and .spec.storageClassName == "fast"' >/dev/null
}

@test "mixed cluster: the arm64 populate-jail Job fills the arm64 claim with jail.populate's settings, after the PVC exists" {
    render_validated "$BATS_TEST_TMPDIR/p.json" -f "$chart/examples/mixed-arch.yaml" --set 'jail.populate.preserve={/opt/site}' \
        --set jail.populate.dryRun=true --set jail.populate.backoffLimit=5 --set jail.populate.generations=true
    obj "$BATS_TEST_TMPDIR/p.json" Job t-slurm-cluster-populate-jail-arm64 | jq -e '
        .spec.backoffLimit == 5
        and .metadata.annotations["helm.sh/hook-delete-policy"] == "before-hook-creation"
        and .spec.template.spec.containers[0].args == ["--source", "/jail-rootfs", "--target", "/mnt/jail", "--preserve", "/opt/site", "--generations", "--dry-run"]
        and .spec.template.spec.containers[0].volumeMounts == [{"name": "jail", "mountPath": "/mnt/jail"}]
        and .spec.template.spec.volumes == [{"name": "jail", "persistentVolumeClaim": {"claimName": "t-slurm-cluster-jail-arm64"}}]' >/dev/null
    # the chart's arm64 PVC is created with the release's objects, so on
    # install (and on the upgrade that adds it) the Job runs after them
    obj "$R/mixed.json" Job t-slurm-cluster-populate-jail-arm64 |
        jq -e '.metadata.annotations["helm.sh/hook"] == "post-install,post-upgrade"' >/dev/null
    obj "$R/mixed.json" Job t-slurm-cluster-populate-jail |
        jq -e '.metadata.annotations["helm.sh/hook"] == "pre-install,pre-upgrade"' >/dev/null
    # a claim of your own exists beforehand: the Job runs before the workers, as the amd64 one
    render_validated "$BATS_TEST_TMPDIR/e.json" -f "$chart/examples/mixed-arch.yaml" --set jail.arm64.persistence.existingClaim=grace-jail
    obj "$BATS_TEST_TMPDIR/e.json" Job t-slurm-cluster-populate-jail-arm64 | jq -e '
        .metadata.annotations["helm.sh/hook"] == "pre-install,pre-upgrade"
        and .spec.template.spec.volumes[0].persistentVolumeClaim.claimName == "grace-jail"' >/dev/null
    run jq -r '[.[] | select(.kind == "PersistentVolumeClaim") | .metadata.name] | join(" ")' "$BATS_TEST_TMPDIR/e.json"
    assert_output t-slurm-cluster-jail
    pod_spec "$BATS_TEST_TMPDIR/e.json" StatefulSet t-slurm-cluster-gh200 |
        jq -e '.volumes[] | select(.name == "jail") | .persistentVolumeClaim.claimName == "grace-jail"' >/dev/null
    # no populate Jobs at all with jail.populate.enabled false (and a claim of your own)
    render_validated "$BATS_TEST_TMPDIR/n.json" -f "$chart/examples/mixed-arch.yaml" --set jail.arm64.persistence.existingClaim=grace-jail \
        --set jail.populate.enabled=false
    run jq -r '[.[] | select(.kind == "Job")] | length' "$BATS_TEST_TMPDIR/n.json"
    assert_output 0
}

@test "upgrade: once the arm64 PVC exists in the cluster (as the release made it, or kept from it), its populate Job is a pre-upgrade hook" {
    d=$BATS_TEST_TMPDIR
    jq -n '[{apiVersion: "v1", kind: "PersistentVolumeClaim",
             metadata: {name: "t-slurm-cluster-jail-arm64", namespace: "hpc",
                        labels: {"app.kubernetes.io/managed-by": "Helm"},
                        annotations: {"meta.helm.sh/release-name": "t", "meta.helm.sh/release-namespace": "hpc"}},
             spec: {accessModes: ["ReadWriteMany"], resources: {requests: {storage: "50Gi"}}}}]' >"$d/objects.json"
    node "$root/hack/lib/kube-run/apiserver.js" "$d/objects.json" "$d/port" "$d/requests.log" &
    echo $! >"$d/pid"
    for _ in $(seq 50); do [ -s "$d/port" ] && break; sleep 0.1; done
    [ -s "$d/port" ] || fail "fake API server did not start"
    printf '%s\n' 'apiVersion: v1' 'kind: Config' \
        "clusters: [{name: fake, cluster: {server: \"http://127.0.0.1:$(cat "$d/port")\"}}]" \
        'users: [{name: fake, user: {token: fake}}]' \
        'contexts: [{name: fake, context: {cluster: fake, user: fake, namespace: hpc}}]' 'current-context: fake' >"$d/kubeconfig"
    run "$helm_bin" template t "$chart" -n hpc --kubeconfig "$d/kubeconfig" --dry-run=server --disable-openapi-validation \
        -f "$chart/examples/mixed-arch.yaml"
    assert_success
    node "$root/tests/helm/lib/k8s-validate.js" --json "$d/up.json" <<<"$output" >/dev/null
    obj "$d/up.json" Job t-slurm-cluster-populate-jail-arm64 |
        jq -e '.metadata.annotations["helm.sh/hook"] == "pre-install,pre-upgrade"' >/dev/null
    grep -q 'GET /api/v1/namespaces/hpc/persistentvolumeclaims/t-slurm-cluster-jail-arm64 200' "$d/requests.log"
}

@test "mixed cluster: arm64 nodes get their own plugin line (jail=/mnt/jail on the arm64 jail, bind=/home) and the amd64 jail's homes at /home" {
    run cm_data "$R/mixed.json" t-slurm-cluster-slurm-config plugstack-gh200.conf
    assert_output 'required chroot.so jail=/mnt/jail bind=/home gpu=on'
    run cm_data "$R/mixed.json" t-slurm-cluster-slurm-config plugstack.conf
    assert_output 'required chroot.so jail=/mnt/jail'
    local gh cpu
    gh=$(pod_spec "$R/mixed.json" StatefulSet t-slurm-cluster-gh200)
    # the arm64 jail at the jail path; /home from the amd64 jail's home
    jq -e '.containers[0].volumeMounts | map(select(.mountPath == "/mnt/jail" or .mountPath == "/home"))
           == [{"name": "jail", "mountPath": "/mnt/jail"}, {"name": "home", "mountPath": "/home", "subPath": "home"}]' <<<"$gh" >/dev/null
    jq -e '[.volumes[] | select(.name == "jail" or .name == "home")]
           == [{"name": "jail", "persistentVolumeClaim": {"claimName": "t-slurm-cluster-jail-arm64"}},
               {"name": "home", "persistentVolumeClaim": {"claimName": "t-slurm-cluster-jail"}}]' <<<"$gh" >/dev/null
    jq -e '.volumes[] | select(.name == "slurm-config") | .configMap.items
           | any(.key == "plugstack-gh200.conf" and .path == "plugstack.conf")' <<<"$gh" >/dev/null
    # amd64 nodes: their jail and its own /home, the shared plugin line
    cpu=$(pod_spec "$R/mixed.json" StatefulSet t-slurm-cluster-cpu)
    jq -e '.containers[0].volumeMounts | map(select(.mountPath == "/mnt/jail" or .mountPath == "/home"))
           == [{"name": "jail", "mountPath": "/mnt/jail"}, {"name": "jail", "mountPath": "/home", "subPath": "home"}]' <<<"$cpu" >/dev/null
    jq -e '(.volumes[] | select(.name == "jail") | .persistentVolumeClaim.claimName == "t-slurm-cluster-jail")
           and (.volumes[] | select(.name == "slurm-config") | has("configMap") and (.configMap | has("items") | not))
           and ([.volumes[] | select(.name == "home")] == [])' <<<"$cpu" >/dev/null
    # the controller (users, from the jail's /etc/passwd) and login stay on the amd64 jail
    for s in controller login; do
        pod_spec "$R/mixed.json" StatefulSet "t-slurm-cluster-$s" |
            jq -e '.volumes[] | select(.name == "jail") | .persistentVolumeClaim.claimName == "t-slurm-cluster-jail"' >/dev/null ||
            fail "$s does not mount the amd64 jail"
    done
}

@test "mixed cluster: the arm64 line keeps plugin.extraArgs (binds are added, GPU settings replace) and CPU-only arm64 nodesets get one too" {
    render_validated "$BATS_TEST_TMPDIR/x.json" -f "$chart/examples/mixed-arch.yaml" --set 'plugin.extraArgs={bind=/dev/infiniband,gpu=off}' \
        --set healthChecks.nccl.enabled=true --set nodesets.armcpu.arch=arm64 --set nodesets.gh200.gpuDriverRoot=/run/nvidia/driver
    run cm_data "$BATS_TEST_TMPDIR/x.json" t-slurm-cluster-slurm-config plugstack-gh200.conf
    assert_output 'required chroot.so jail=/mnt/jail bind=/home bind=/etc/slurm-jail:/etc/slurm-jail:ro bind=/dev/infiniband gpu=on gpu_driver_root=/run/nvidia/driver'
    run cm_data "$BATS_TEST_TMPDIR/x.json" t-slurm-cluster-slurm-config plugstack-armcpu.conf
    assert_output 'required chroot.so jail=/mnt/jail bind=/home bind=/etc/slurm-jail:/etc/slurm-jail:ro bind=/dev/infiniband gpu=off'
    run cm_data "$BATS_TEST_TMPDIR/x.json" t-slurm-cluster-slurm-config plugstack.conf
    assert_output 'required chroot.so jail=/mnt/jail bind=/etc/slurm-jail:/etc/slurm-jail:ro bind=/dev/infiniband gpu=off'
    # one arm64 jail for both arm64 nodesets
    pod_spec "$BATS_TEST_TMPDIR/x.json" StatefulSet t-slurm-cluster-armcpu |
        jq -e '(.volumes[] | select(.name == "jail") | .persistentVolumeClaim.claimName == "t-slurm-cluster-jail-arm64")
               and .nodeSelector == {"kubernetes.io/arch": "arm64"}' >/dev/null
    run jq -r '[.[] | select(.kind == "Job") | .metadata.name] | sort | join(" ")' "$BATS_TEST_TMPDIR/x.json"
    assert_output "t-slurm-cluster-populate-jail t-slurm-cluster-populate-jail-arm64"
}

@test "nodesetDefaults.arch arm64: every nodeset on arm64; controller and login still on amd64 with the amd64 jail" {
    render_validated "$BATS_TEST_TMPDIR/a.json" --set nodesetDefaults.arch=arm64
    run arch_of "$BATS_TEST_TMPDIR/a.json" StatefulSet t-slurm-cluster-cpu
    assert_output arm64
    run arch_of "$BATS_TEST_TMPDIR/a.json" StatefulSet t-slurm-cluster-controller
    assert_output amd64
    obj "$BATS_TEST_TMPDIR/a.json" PersistentVolumeClaim t-slurm-cluster-jail >/dev/null
    obj "$BATS_TEST_TMPDIR/a.json" PersistentVolumeClaim t-slurm-cluster-jail-arm64 >/dev/null
}

@test "the jail check on arm64 nodes probes their own jail at the same path" {
    run cm_data "$R/mixed.json" t-slurm-cluster-scripts health-check
    assert_output --partial '--jail /mnt/jail; fs=$?'
    run cm_data "$R/mixed.json" t-slurm-cluster-slurm-config slurm.conf
    assert_line HealthCheckProgram=/opt/slurm-jail-chart/health-check
}
