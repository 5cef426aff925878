#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns and in-container scripts
# Secret stability: the munge key, SSH host keys and MariaDB passwords are
# generated once and then re-rendered unchanged on every upgrade. Helm's
# `lookup` reads the Secrets already in the cluster; here kube-run's read-only
# API server (hack/lib/kube-run/apiserver.js) plays the cluster, and `helm
# template --dry-run=server` makes helm call it exactly as `helm upgrade` would.

load helpers

setup_file() {
    require_helm_tools "$root" kubernetes-models
}

setup() {
    d=$BATS_TEST_TMPDIR
}

teardown() {
    if [ -f "$d/pid" ]; then
        kill "$(cat "$d/pid")" 2>/dev/null || true
        wait "$(cat "$d/pid")" 2>/dev/null || true
    fi
}

# secret NAME KEY=BASE64...: a Secret as a previous release of "t" left it.
secret() {
    local name=$1
    shift
    local data='{}' kv
    for kv in "$@"; do
        data=$(jq -c --arg k "${kv%%=*}" --arg v "${kv#*=}" '. + {($k): $v}' <<<"$data")
    done
    jq -nc --arg n "$name" --argjson data "$data" '{apiVersion: "v1", kind: "Secret", type: "Opaque",
        metadata: {name: $n, namespace: "hpc", labels: {"app.kubernetes.io/managed-by": "Helm"},
                   annotations: {"meta.helm.sh/release-name": "t", "meta.helm.sh/release-namespace": "hpc"}},
        data: $data}'
}

# cluster SECRET_JSON...: start the fake API server holding these Secrets.
cluster() {
    printf '%s\n' "$@" | jq -s . >"$d/secrets.json"
    node "$root/hack/lib/kube-run/apiserver.js" "$d/secrets.json" "$d/port" "$d/requests.log" &
    echo $! >"$d/pid"
    for _ in $(seq 50); do [ -s "$d/port" ] && break; sleep 0.1; done
    [ -s "$d/port" ] || fail "fake API server did not start"
    cat >"$d/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "http://127.0.0.1:$(cat "$d/port")"}}]
users: [{name: fake, user: {token: fake}}]
contexts: [{name: fake, context: {cluster: fake, user: fake, namespace: hpc}}]
current-context: fake
KC
}

# upgrade_render OUT.json [args]: render against the fake cluster.
upgrade_render() {
    local out=$1
    shift
    "$helm_bin" template t "$chart" -n hpc --kubeconfig "$d/kubeconfig" \
        --dry-run=server --disable-openapi-validation "$@" >"$out.yaml"
    node "$root/tests/helm/lib/k8s-validate.js" --json "$out" <"$out.yaml"
}

data_of() { # FILE SECRET KEY
    jq -er --arg n "$2" --arg k "$3" '.[] | select(.kind == "Secret" and .metadata.name == $n) | .data[$k]' "$1"
}

@test "first install: keys are generated, and differ between two installs" {
    render_validated "$d/a.json" -f "$chart/examples/accounting.yaml"
    render_validated "$d/b.json" -f "$chart/examples/accounting.yaml"
    for s in "t-slurm-cluster-munge munge.key" "t-slurm-cluster-ssh-host-keys ssh_host_rsa_key" \
        "t-slurm-cluster-ssh-host-keys ssh_host_ecdsa_key" "t-slurm-cluster-mariadb password"; do
        # shellcheck disable=SC2086
        a=$(data_of "$d/a.json" $s) && b=$(data_of "$d/b.json" $s)
        [ -n "$a" ] && [ "$a" != "$b" ] || fail "$s is not freshly generated per install"
    done
}

@test "upgrade: the munge key, host keys and database passwords already in the cluster are kept byte for byte" {
    munge=$(head -c 1024 /dev/urandom | base64 -w0)
    ecdsa=$(printf 'old-ecdsa-key' | base64 -w0)
    rsa=$(printf 'old-rsa-key' | base64 -w0)
    cluster "$(secret t-slurm-cluster-munge "munge.key=$munge")" \
        "$(secret t-slurm-cluster-ssh-host-keys "ssh_host_ecdsa_key=$ecdsa" "ssh_host_rsa_key=$rsa")" \
        "$(secret t-slurm-cluster-mariadb password=b2xkcHc= root-password=b2xkcm9vdA==)"
    for run in 1 2; do
        upgrade_render "$d/u$run.json" -f "$chart/examples/accounting.yaml"
        [ "$(data_of "$d/u$run.json" t-slurm-cluster-munge munge.key)" = "$munge" ]
        [ "$(data_of "$d/u$run.json" t-slurm-cluster-ssh-host-keys ssh_host_ecdsa_key)" = "$ecdsa" ]
        [ "$(data_of "$d/u$run.json" t-slurm-cluster-ssh-host-keys ssh_host_rsa_key)" = "$rsa" ]
        [ "$(data_of "$d/u$run.json" t-slurm-cluster-mariadb password)" = "b2xkcHc=" ]
        [ "$(data_of "$d/u$run.json" t-slurm-cluster-mariadb root-password)" = "b2xkcm9vdA==" ]
    done
    # helm really asked the cluster for each of them
    for s in munge ssh-host-keys mariadb; do
        grep -q "^GET /api/v1/namespaces/hpc/secrets/t-slurm-cluster-$s 200$" "$d/requests.log"
    done
}

@test "upgrade: a key missing from an existing Secret is generated, the others kept" {
    ecdsa=$(printf 'old-ecdsa-key' | base64 -w0)
    cluster "$(secret t-slurm-cluster-ssh-host-keys "ssh_host_ecdsa_key=$ecdsa")"
    upgrade_render "$d/u.json"
    [ "$(data_of "$d/u.json" t-slurm-cluster-ssh-host-keys ssh_host_ecdsa_key)" = "$ecdsa" ]
    data_of "$d/u.json" t-slurm-cluster-ssh-host-keys ssh_host_rsa_key | base64 -d | grep -q 'BEGIN RSA PRIVATE KEY'
    # the munge Secret was absent from the cluster: a new 1024-byte key
    [ "$(data_of "$d/u.json" t-slurm-cluster-munge munge.key | base64 -d | wc -c)" -eq 1024 ]
    grep -q '^GET /api/v1/namespaces/hpc/secrets/t-slurm-cluster-munge 404$' "$d/requests.log"
}

@test "generated Secrets survive helm uninstall (resource-policy keep)" {
    render_validated "$d/a.json" -f "$chart/examples/accounting.yaml"
    run jq -r '.[] | select(.kind == "Secret" and .metadata.annotations["helm.sh/resource-policy"] == "keep") | .metadata.name' "$d/a.json"
    assert_output $'t-slurm-cluster-munge\nt-slurm-cluster-ssh-host-keys\nt-slurm-cluster-mariadb'
}

@test "existing Secrets named in values are used as they are: nothing generated, nothing looked up" {
    cluster
    upgrade_render "$d/u.json" --set munge.existingSecret=site-munge --set login.hostKeys.existingSecret=site-hostkeys
    run jq -r '.[] | select(.kind == "Secret") | .metadata.name' "$d/u.json"
    assert_output "t-slurm-cluster-authorized-keys"
    run grep -E 'secrets/(t-slurm-cluster-munge|t-slurm-cluster-ssh-host-keys|site-)' "$d/requests.log"
    assert_output ""
    obj "$d/u.json" StatefulSet t-slurm-cluster-login | jq -e '.spec.template.spec.volumes | any(.secret.secretName == "site-hostkeys")' >/dev/null
}
