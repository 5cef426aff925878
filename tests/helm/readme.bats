#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns and in-container scripts
# The chart README's values table is generated from the `# --` comments of
# values.yaml and must be in sync; every key is documented.

load helpers

@test "every values.yaml key has a helm-docs '# --' comment and README.md's table is up to date" {
    run node "$chart/hack/values-doc.js" --check
    assert_success
    assert_output --regexp '[0-9]+ documented keys'
}

@test "the check fails on an undocumented key and on a stale README" {
    cp -r "$chart" "$BATS_TEST_TMPDIR/c"
    printf '\nsurprise: 1\n' >>"$BATS_TEST_TMPDIR/c/values.yaml"
    run node "$BATS_TEST_TMPDIR/c/hack/values-doc.js" --check
    assert_failure
    assert_output --partial "values.yaml: key surprise has no '# --' comment"
    cp "$chart/values.yaml" "$BATS_TEST_TMPDIR/c/values.yaml"
    sed -i 's/^  # -- Pull policy of every slurm-jail image./  # -- The pull policy./' "$BATS_TEST_TMPDIR/c/values.yaml"
    run node "$BATS_TEST_TMPDIR/c/hack/values-doc.js" --check
    assert_failure
    assert_output --partial "README.md values table is out of date"
}

@test "the README's minimal values file installs: lint and render with it" {
    awk '/^A minimal values file/ {found = 1} found && /^```$/ && inblock {exit}
         inblock {print} found && /^```yaml$/ {inblock = 1}' "$chart/README.md" >"$BATS_TEST_TMPDIR/my-values.yaml"
    # the same file as examples/minimal.yaml (linted and validated there too)
    diff "$BATS_TEST_TMPDIR/my-values.yaml" "$chart/examples/minimal.yaml"
    run "$helm_bin" lint --strict "$chart" -f "$BATS_TEST_TMPDIR/my-values.yaml"
    assert_success
    run render_validated "$BATS_TEST_TMPDIR/out.json" -f "$BATS_TEST_TMPDIR/my-values.yaml"
    assert_success
    obj "$BATS_TEST_TMPDIR/out.json" StatefulSet t-slurm-cluster-login | jq -e '.spec.template.spec.containers[0].image == "registry.example.com/hpc/slurm-jail/login:0.1.0-slurm24.11"' >/dev/null
}
