#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154,SC2016 # variables come from helpers.bash; single-quoted $ are jq/JS
# hack/kube-run's pure part, without podman: from rendered objects (and its
# record of what runs) to the plan of podman actions, the list of what it
# cannot honour, the names cluster DNS would give, and its lookup API.

load helpers

setup_file() {
    require_helm_tools "$root" yaml
    export R=$BATS_FILE_TMPDIR
    "$helm_bin" template t "$chart" -n hpc >"$R/default.yaml"
    "$helm_bin" template t "$chart" -n hpc -f "$chart/examples/loadbalancer-login.yaml" >"$R/lb.yaml"
    "$helm_bin" template t "$chart" -n hpc -f "$chart/examples/gpu-two-nodesets.yaml" >"$R/gpu.yaml"
    "$kube_run" --state "$R/none" plan -f "$R/default.yaml" >"$R/default.plan"
}

# plan_of FILE [STATE]: kube-run plan as JSON
plan_of() { "$kube_run" --state "${2:-$R/none}" plan -f "$1"; }

# pod_create PLAN POD CONTAINER: that container's podman create arguments, one per line
pod_create() {
    jq -r --arg p "$2" --arg c "$3" '.actions[] | select(.pod.name == $p) | .pod.containers[] | select(.name == $c) | .create[]' "$1"
}

# state_with PODS...: a state directory recording an installed release of
# default.yaml whose worker pods are POD=TEMPLATEHASH.
state_with() {
    local dir=$BATS_TEST_TMPDIR/state pods='{}' kv
    mkdir -p "$dir"
    for kv in "$@"; do
        pods=$(jq -c --arg n "${kv%%=*}" --arg h "${kv#*=}" '. + {($n): {owner: "StatefulSet/t-slurm-cluster-cpu", templateHash: $h}}' <<<"$pods")
    done
    jq -n --argjson pods "$pods" '{version: 1, installed: true, namespace: "hpc", domain: "cluster.local",
        objects: {"StatefulSet/gone": {kind: "StatefulSet", metadata: {name: "gone"}}}, hooks: {},
        pods: ($pods + {"gone-0": {owner: "StatefulSet/gone", templateHash: "x"}}), jobs: {}, nextIp: 10}' >"$dir/state.json"
    echo "$dir"
}

@test "plan: the PVC hook, then the populate Job, then config, Services and the StatefulSets' pods; the test hook only recorded" {
    run jq -r '.actions[] | "\(.op) \(.key // .pod.name // "")"' "$R/default.plan"
    assert_success
    assert_output - <<'OUT'
network 
apply PersistentVolumeClaim/t-slurm-cluster-jail
run-job Job/t-slurm-cluster-populate-jail
apply Secret/t-slurm-cluster-munge
apply Secret/t-slurm-cluster-ssh-host-keys
apply Secret/t-slurm-cluster-authorized-keys
apply ConfigMap/t-slurm-cluster-health-config
apply ConfigMap/t-slurm-cluster-scripts
apply ConfigMap/t-slurm-cluster-slurm-config
apply Service/t-slurm-cluster-controller
apply Service/t-slurm-cluster-login
apply Service/t-slurm-cluster-cpu
apply StatefulSet/t-slurm-cluster-controller
create-pod t-slurm-cluster-controller-0
apply StatefulSet/t-slurm-cluster-login
create-pod t-slurm-cluster-login-0
apply StatefulSet/t-slurm-cluster-cpu
create-pod t-slurm-cluster-cpu-0
create-pod t-slurm-cluster-cpu-1
apply Pod/t-slurm-cluster-test-jail-job
OUT
    jq -e '.phase == "install" and .namespace == "hpc"' "$R/default.plan" >/dev/null
}

@test "plan: a worker's podman command is the chart's: image, args, env, mounts, capabilities, unmasked /proc, grace period" {
    run pod_create "$R/default.plan" t-slurm-cluster-cpu-0 slurmd
    assert_success
    local dir=$R/none
    # the image's ENTRYPOINT is kept; args replace its CMD
    assert_equal "${lines[-2]}" slurm-jail/worker:0.1.0-slurm24.11
    assert_equal "${lines[-1]}" slurmd
    refute_line --partial -- --entrypoint
    assert_line "$dir/volumes/t-slurm-cluster-jail:/mnt/jail"
    assert_line "$dir/volumes/t-slurm-cluster-jail/home:/home" # subPath home
    assert_line "$dir/pods/t-slurm-cluster-cpu-0/volumes/slurm-config:/etc/slurm:ro"
    assert_line "$dir/pods/t-slurm-cluster-cpu-0/volumes/munge-key:/etc/munge-secret:ro"
    assert_line "$dir/pods/t-slurm-cluster-cpu-0/hosts:/etc/hosts:ro"
    assert_line --cap-add=SYS_ADMIN
    assert_line --cap-add=SYS_CHROOT
    assert_line --cap-drop=all
    assert_line unmask=ALL
    refute_line --privileged
    assert_line 630 # --stop-timeout: drainGracePeriodSeconds + 30
    assert_line always # --restart: a StatefulSet pod restarts
    run jq -c '.actions[] | select(.pod.name == "t-slurm-cluster-cpu-0") | .pod.containers[0] | [.postStart, .preStop, .env[0].name]' "$R/default.plan"
    assert_output '[["/opt/slurm-jail-chart/node-lifecycle","resume"],["/opt/slurm-jail-chart/node-lifecycle","drain","600"],"SLURMD_DYNAMIC_CONF"]'
    # the pod: its hostname, no network of podman's own (kube-run wires it)
    run jq -r '.actions[] | select(.pod.name == "t-slurm-cluster-cpu-0") | .pod | "\(.hostname) \(.subdomain) \(.podCreate | join(" "))"' "$R/default.plan"
    assert_output --partial 't-slurm-cluster-cpu-0 t-slurm-cluster-cpu pod create'
    assert_output --partial '--hostname t-slurm-cluster-cpu-0 --network none'
}

@test "plan: capabilities are the runtime's default set plus those added, minus those dropped; privileged is privileged" {
    run pod_create "$R/default.plan" t-slurm-cluster-login-0 sshd
    run grep -c -- '^--cap-add=' <<<"$output"
    assert_output 15 # the 14 of containerd's default set, plus SYS_ADMIN (SYS_CHROOT is in the set)
    plan_of "$R/lb.yaml" >"$BATS_TEST_TMPDIR/lb.plan"
    run pod_create "$BATS_TEST_TMPDIR/lb.plan" t-slurm-cluster-cpu-0 slurmd
    assert_line --privileged
    refute_line --partial -- --cap-add
    cat >"$BATS_TEST_TMPDIR/caps.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: x}
spec:
  containers:
    - name: c
      image: i
      command: [/bin/a, b]
      securityContext: {capabilities: {drop: [ALL], add: [NET_ADMIN]}, runAsUser: 1000, runAsGroup: 1000, readOnlyRootFilesystem: true}
EOF
    run bash -c "'$kube_run' --state '$R/none' plan -f '$BATS_TEST_TMPDIR/caps.yaml' | jq -r '.actions[] | select(.pod) | .pod.containers[0].create | join(\" \")'"
    assert_output --partial '--cap-drop=all --cap-add=NET_ADMIN --user 1000:1000 --read-only --entrypoint ["/bin/a","b"] i'
}

@test "plan: Secret and ConfigMap volumes keep their defaultMode (YAML 1.1: 0400 is octal)" {
    run jq -r '.actions[] | select(.pod.name == "t-slurm-cluster-login-0") | .pod.volumes[] | "\(.name) \(.type) \(.source) \(.defaultMode)"' "$R/default.plan"
    assert_line 'munge-key secret Secret/t-slurm-cluster-munge 256'
    assert_line 'host-keys secret Secret/t-slurm-cluster-ssh-host-keys 256'
    assert_line 'authorized-keys secret Secret/t-slurm-cluster-authorized-keys 292'
    assert_line 'slurm-config configMap ConfigMap/t-slurm-cluster-slurm-config 420'
}

@test "plan: upgrade: changed template rolls pods highest ordinal first; more replicas create, fewer delete in parallel; removed objects go" {
    local st
    st=$(state_with t-slurm-cluster-cpu-0=old t-slurm-cluster-cpu-1=old t-slurm-cluster-cpu-2=old t-slurm-cluster-cpu-3=old)
    run bash -c "'$kube_run' --state '$st' plan -f '$R/default.yaml' | jq -r '.actions[] | select(.op != \"apply\") | \"\(.op) \(.name // .pod.name // .key // \"\") \(.names // [] | join(\",\"))\"'"
    assert_success
    assert_line 'run-job Job/t-slurm-cluster-populate-jail ' # pre-upgrade hook
    refute_line --partial PersistentVolumeClaim # pre-install only
    assert_line 'delete-pods  t-slurm-cluster-cpu-3,t-slurm-cluster-cpu-2' # Parallel: one action
    # replicas 2: cpu-1 then cpu-0 are rolled
    [ "$(grep -n 'replace-pod t-slurm-cluster-cpu-1' <<<"$output" | cut -d: -f1)" -lt "$(grep -n 'replace-pod t-slurm-cluster-cpu-0' <<<"$output" | cut -d: -f1)" ]
    assert_line 'delete-pods  gone-0'
    assert_line 'forget StatefulSet/gone '
    jq -e '.phase == "upgrade"' <(plan_of "$R/default.yaml" "$st") >/dev/null
}

@test "plan: an unchanged pod is not touched; scaling out creates only the new ordinal" {
    local hash st
    hash=$(node -e '
        const YAML = require("yaml"); const { templateHash } = require(process.argv[1]);
        const objs = YAML.parseAllDocuments(require("fs").readFileSync(process.argv[2], "utf8"), { version: "1.1" }).map((d) => d.toJSON());
        console.log(templateHash(objs.find((o) => o && o.kind === "StatefulSet" && o.metadata.name === "t-slurm-cluster-cpu")));
    ' "$root/hack/lib/kube-run/plan.js" "$R/default.yaml")
    st=$(state_with "t-slurm-cluster-cpu-0=$hash")
    run bash -c "'$kube_run' --state '$st' plan -f '$R/default.yaml' | jq -r '.actions[] | select(.pod.owner == \"StatefulSet/t-slurm-cluster-cpu\") | \"\(.op) \(.pod.name)\"'"
    assert_output 'create-pod t-slurm-cluster-cpu-1'
}

@test "unsupported: every field kube-run does not honour is listed with its reason" {
    run "$kube_run" unsupported -f "$R/gpu.yaml"
    assert_success
    assert_line 'StatefulSet/t-slurm-cluster-cpu: spec.template.spec.hostUsers=false: runs in the host user namespace (podman --userns is not set; the jail must look root-owned without idmapped mounts)'
    assert_line --regexp '^StatefulSet/t-slurm-cluster-h100: spec.template.spec.containers\[0\].resources=.*nvidia.com/gpu.*: no resource requests or limits'
    assert_line --regexp '^StatefulSet/t-slurm-cluster-h100: spec.template.spec.nodeSelector=.*: one podman host: no scheduling$'
    assert_line --regexp '^StatefulSet/t-slurm-cluster-h100: spec.template.spec.tolerations=.*: one podman host: no scheduling$'
    assert_line --regexp '^CronJob/t-slurm-cluster-nccl-check: spec.schedule="30 2 \* \* 6": never scheduled: run a Job from it with `kube-run run-cronjob NAME`$'
    assert_line --regexp '^StatefulSet/t-slurm-cluster-controller: spec.template.spec.containers\[0\].livenessProbe=.*: liveness probes are not run'
    assert_line --regexp '^PersistentVolumeClaim/t-slurm-cluster-jail: spec.resources=.*: a host directory, no size$'
    run "$kube_run" unsupported -f "$R/lb.yaml"
    assert_line 'NetworkPolicy/t-allow-ssh: kind NetworkPolicy is not run by kube-run'
    assert_line --partial 'Service/t-slurm-cluster-login: spec.type="LoadBalancer"'
    assert_line --partial 'Service/t-slurm-cluster-login: spec.loadBalancerSourceRanges=["203.0.113.0/24"]: no load balancer'
    # what it does honour is not listed
    refute_output --partial 'securityContext'
    refute_output --partial 'lifecycle'
    refute_output --partial 'readinessProbe'
}

@test "unsupported: a field kube-run does not know is reported, never dropped in silence" {
    cat >"$BATS_TEST_TMPDIR/odd.yaml" <<'EOF'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s, namespace: x}
spec:
  serviceName: s
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      shareProcessNamespace: true
      containers: [{name: c, image: i, envFrom: [{configMapRef: {name: m}}], lifecycle: {preStop: {httpGet: {port: 80}}}}]
EOF
    run "$kube_run" unsupported -f "$BATS_TEST_TMPDIR/odd.yaml"
    assert_line 'StatefulSet/s: spec.template.spec.shareProcessNamespace=true: not read by kube-run'
    assert_line --partial 'StatefulSet/s: spec.template.spec.containers[0].envFrom='
    assert_line 'StatefulSet/s: spec.template.spec.containers[0].lifecycle.preStop.httpGet={"port":80}: only exec hooks'
}

@test "DNS: pods of a headless Service get FQDNs, Services resolve to their pods; a pod's bare hostname only in its own /etc/hosts" {
    run node -e '
        const dns = require(process.argv[1]);
        const pods = [
          { name: "w-1", hostname: "w-1", subdomain: "w", ip: "10.244.0.12", labels: { app: "w" } },
          { name: "w-0", hostname: "w-0", subdomain: "w", ip: "10.244.0.11", labels: { app: "w" } },
          { name: "l-0", hostname: "l-0", subdomain: "l", ip: "10.244.0.13", labels: { app: "l" } },
        ];
        const svcs = [
          { metadata: { name: "w" }, spec: { clusterIP: "None", selector: { app: "w" } } },
          { metadata: { name: "login" }, spec: { selector: { app: "l" } } },
        ];
        const recs = dns.records(pods, svcs, "hpc", "cluster.local");
        console.log(dns.resolve("w-0.w.hpc.svc.cluster.local", recs), dns.resolve("w-1.w", recs), dns.resolve("w", recs),
          dns.resolve("login.hpc.svc", recs), dns.resolve("l-0.login", recs) || "none", dns.resolve("w-0", recs) || "none");
        process.stdout.write(dns.hostsFile(pods[1], recs, "hpc", "cluster.local"));
        process.stdout.write(dns.resolvConf("hpc", "cluster.local"));
    ' "$root/hack/lib/kube-run/dns.js"
    assert_success
    # the Service answers with its lowest ordinal first; login is no headless Service: no pod names under it
    assert_line --index 0 '10.244.0.11 10.244.0.12 10.244.0.11 10.244.0.13 none none'
    assert_line "10.244.0.11	w-0.w.hpc.svc.cluster.local w-0"
    assert_line 'search hpc.svc.cluster.local svc.cluster.local cluster.local'
}

@test "lookup API: helm's GET of a Secret kube-run holds is answered; anything else is 404" {
    run node -e '
        const { route } = require(process.argv[1]);
        const find = (kind, ns, name) => (kind === "Secret" && ns === "hpc" && name === "s" ? { kind, metadata: { name } } : null);
        for (const p of ["/api/v1/namespaces/hpc/secrets/s", "/api/v1/namespaces/hpc/secrets/t", "/api/v1/namespaces/other/secrets/s",
                         "/apis/apps/v1/namespaces/hpc/secrets/s", "/api/v1"]) {
          const [code, body] = route(p, find);
          console.log(code, body.kind);
        }
    ' "$root/hack/lib/kube-run/apiserver.js"
    assert_output - <<'OUT'
200 Secret
404 Status
404 Status
404 Status
200 APIResourceList
OUT
}

@test "bad input: a clear error naming the cause, nothing run" {
    printf 'kind: Secret\nmetadata: {}\n' >"$BATS_TEST_TMPDIR/bad.yaml"
    run "$kube_run" --state "$R/none" plan -f "$BATS_TEST_TMPDIR/bad.yaml"
    assert_failure 1
    assert_output 'kube-run: document 1 is not a Kubernetes object (no kind or metadata.name)'
    printf 'kind: Secret\nmetadata: {name: a, namespace: x}\n---\nkind: Secret\nmetadata: {name: b, namespace: z}\n' >"$BATS_TEST_TMPDIR/two.yaml"
    run "$kube_run" --state "$R/none" plan -f "$BATS_TEST_TMPDIR/two.yaml"
    assert_failure 1
    assert_output 'kube-run: objects in several namespaces (x, z); kube-run runs one namespace'
    run "$kube_run" plan
    assert_failure 2
    assert_output --partial '-f FILE is required'
    run "$kube_run" frobnicate
    assert_failure 2
    assert_output "kube-run: unknown command 'frobnicate'; try kube-run --help"
    run "$kube_run" --state "$R/none" scale statefulset/x --replicas many
    assert_failure 2
    assert_output "kube-run: --replicas needs a whole number, got 'many'"
    [ ! -e "$R/none" ] # plan never writes state
}

@test "kube-run --help and its man page" {
    run "$kube_run" --help
    assert_success
    assert_output --partial 'Usage: kube-run [--state DIR] COMMAND [ARGS]'
    run man -l "$root/hack/man/kube-run.1"
    assert_success
    assert_output --partial 'kube-run - run a rendered Helm chart on podman'
    # every command of --help is in the man page
    for c in apply render plan unsupported scale delete test run-cronjob exec logs get ip netns uninstall; do
        sed 's/\\-/-/g' "$root/hack/man/kube-run.1" | grep -q "^\.B $c" || fail "man page lacks the command $c"
    done
}
