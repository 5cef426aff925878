#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns and in-container scripts
# helm lint --strict and schema validation of every rendered object, for the
# default values and every example values file.

load helpers

setup_file() {
    require_helm_tools "$root" kubernetes-models
}

lint_and_validate() {
    local args=()
    [ -z "${1:-}" ] || args=(-f "$chart/examples/$1")
    run "$helm_bin" lint --strict "$chart" "${args[@]}"
    assert_success
    assert_output --partial "0 chart(s) failed"
    run render_validated "$BATS_TEST_TMPDIR/out.json" "${args[@]}"
    assert_success
    assert_output --regexp "[0-9]+ objects checked, 0 invalid"
    # every object kind we render must be present, and nothing unvalidated
    [ "$(jq length "$BATS_TEST_TMPDIR/out.json")" -ge 14 ]
}

@test "default values: lint --strict, every object valid against the Kubernetes API schemas" {
    lint_and_validate ""
}

@test "examples/minimal.yaml: lint and validate" {
    lint_and_validate minimal.yaml
}

@test "examples/cpu-only.yaml: lint and validate" {
    lint_and_validate cpu-only.yaml
}

@test "examples/gpu-two-nodesets.yaml: lint and validate" {
    lint_and_validate gpu-two-nodesets.yaml
}

@test "examples/accounting.yaml (MariaDB in the chart): lint and validate" {
    lint_and_validate accounting.yaml
}

@test "examples/accounting-external.yaml: lint and validate" {
    lint_and_validate accounting-external.yaml
}

@test "examples/loadbalancer-login.yaml: lint and validate" {
    lint_and_validate loadbalancer-login.yaml
}

@test "examples/mixed-arch.yaml (amd64 and arm64 nodesets): lint and validate" {
    lint_and_validate mixed-arch.yaml
}

@test "the validator rejects an object that breaks the Kubernetes schema" {
    # A StatefulSet without its required selector, and a port given as text.
    printf '%s\n' 'apiVersion: apps/v1' 'kind: StatefulSet' 'metadata: {name: x}' \
        'spec: {serviceName: x, template: {spec: {containers: [{name: a, image: b, ports: [{containerPort: "p"}]}]}}}' \
        >"$BATS_TEST_TMPDIR/bad.yaml"
    run node "$root/tests/helm/lib/k8s-validate.js" <"$BATS_TEST_TMPDIR/bad.yaml"
    assert_failure
    assert_output --partial "INVALID StatefulSet/x"
    assert_output --partial "selector"
}

@test "the validator rejects a kind it has no schema for" {
    printf '%s\n' 'apiVersion: example.com/v1' 'kind: Widget' 'metadata: {name: w}' >"$BATS_TEST_TMPDIR/w.yaml"
    run node "$root/tests/helm/lib/k8s-validate.js" <"$BATS_TEST_TMPDIR/w.yaml"
    assert_failure
    assert_output --partial "no Kubernetes schema for apiVersion example.com/v1 kind Widget"
}

@test "every example values file is tested above" {
    for f in "$chart"/examples/*.yaml; do
        grep -q "lint_and_validate $(basename "$f")" "$BATS_TEST_FILENAME" ||
            fail "examples/$(basename "$f") has no lint/validate test"
    done
}

@test "the validator rejects unknown fields, as kubectl's strict field validation does" {
    printf '%s\n' 'apiVersion: batch/v1' 'kind: CronJob' 'metadata: {name: c, labelz: {a: b}}' \
        'spec:' '  schedule: "* * * * *"' '  concurrencyPolicy: Forbid' \
        '  jobTemplate: {spec: {template: {spec: {hostUser: false, containers: [{name: a, image: b, securityContext: {procMount: Unmasked, capabilities: {ad: [SYS_ADMIN]}}, volumeMounts: [{name: v, mountpath: /x}]}]}}}}' \
        >"$BATS_TEST_TMPDIR/typo.yaml"
    run node "$root/tests/helm/lib/k8s-validate.js" <"$BATS_TEST_TMPDIR/typo.yaml"
    assert_failure
    assert_line "INVALID CronJob/c: unknown field metadata.labelz"
    assert_line "INVALID CronJob/c: unknown field spec.jobTemplate.spec.template.spec.hostUser"
    assert_line "INVALID CronJob/c: unknown field spec.jobTemplate.spec.template.spec.containers[0].securityContext.capabilities.ad"
    assert_line "INVALID CronJob/c: unknown field spec.jobTemplate.spec.template.spec.containers[0].volumeMounts[0].mountpath"
    assert_line --partial "volumeMounts/0 must have required property mountPath"
    assert_line "1 objects checked, 5 invalid"
}
