#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns
# The Grafana dashboard of the health checks: its ConfigMap for Grafana's
# sidecar, its JSON in step with its source (hack/health-dashboard.js), and
# that JSON against Grafana's own schema (@grafana/schema, checked by tsc).
# grafana-dashboard-queries.bats runs its queries against a real Prometheus.

load helpers

setup_file() {
    require_helm_tools "$root" kubernetes-models
    export R=$BATS_FILE_TMPDIR
    render_validated "$R/on.json" --set healthChecks.grafanaDashboard.enabled=true
    cm_data "$R/on.json" t-slurm-cluster-health-dashboard slurm-jail-health.json >"$R/dashboard.json"
}

# grafana-check.js gets a TMPDIR of its own, which it must leave empty
# whatever its verdict.
setup() {
    mkdir "$BATS_TEST_TMPDIR/tmp"
}

teardown() {
    run ls -A "$BATS_TEST_TMPDIR/tmp"
    assert_output ''
}

check_schema() { # DASHBOARD.json
    TMPDIR=$BATS_TEST_TMPDIR/tmp node "$root/tests/helm/lib/grafana-check.js" "$1"
}

@test "off by default: no dashboard ConfigMap" {
    render_validated "$BATS_TEST_TMPDIR/default.json"
    run jq -e '[.[] | select(.kind == "ConfigMap" and (.metadata.labels.grafana_dashboard != null))] == []' \
        "$BATS_TEST_TMPDIR/default.json"
    assert_success
}

@test "enabled: one ConfigMap with the sidecar's label holds the generated dashboard, byte for byte" {
    run obj "$R/on.json" ConfigMap t-slurm-cluster-health-dashboard
    assert_success
    jq -e '.metadata.namespace == "hpc" and .metadata.labels.grafana_dashboard == "1"
           and .metadata.labels["app.kubernetes.io/component"] == "health-dashboard"
           and (.metadata.annotations == null) and (.data | keys) == ["slurm-jail-health.json"]' <<<"$output"
    cmp "$R/dashboard.json" "$chart/files/dashboards/slurm-jail-health.json"
    # the sidecar's label, the folder annotation and Grafana's namespace are the user's
    render_validated "$BATS_TEST_TMPDIR/x.json" --set healthChecks.grafanaDashboard.enabled=true \
        --set healthChecks.grafanaDashboard.sidecarLabel=example.com/dashboard \
        --set-string healthChecks.grafanaDashboard.sidecarLabelValue=yes \
        --set healthChecks.grafanaDashboard.annotations.grafana_folder=Slurm \
        --set healthChecks.grafanaDashboard.namespace=monitoring
    obj "$BATS_TEST_TMPDIR/x.json" ConfigMap t-slurm-cluster-health-dashboard |
        jq -e '.metadata.namespace == "monitoring" and .metadata.labels["example.com/dashboard"] == "yes"
               and .metadata.labels.grafana_dashboard == null and .metadata.annotations == {"grafana_folder": "Slurm"}'
}

@test "the JSON is what hack/health-dashboard.js generates, and the check notices a hand edit" {
    run node "$chart/hack/health-dashboard.js" --check
    assert_success
    assert_output "slurm-jail-health.json is up to date"
    cp -r "$chart" "$BATS_TEST_TMPDIR/c"
    sed -i 's/"title": "Nodes reporting"/"title": "Nodes"/' "$BATS_TEST_TMPDIR/c/files/dashboards/slurm-jail-health.json"
    run node "$BATS_TEST_TMPDIR/c/hack/health-dashboard.js" --check
    assert_failure
    assert_output --partial "slurm-jail-health.json is out of date: run node"
}

@test "the dashboard as shipped is valid against Grafana's schema: the Dashboard type and each panel plugin's options" {
    run check_schema "$R/dashboard.json"
    assert_success
    assert_output --regexp "valid against @grafana/schema [0-9.]+ \([0-9]+ panels\)$"
    # every panel of every row was checked
    n=$(jq '[.panels[] | if .type == "row" then .panels[] else . end] | length' "$R/dashboard.json")
    assert_output --partial "($n panels)"
}

@test "the schema check refuses what Grafana's types refuse" {
    local d=$R/dashboard.json b=$BATS_TEST_TMPDIR/bad.json
    # a key the Dashboard type does not have
    jq '.refreshInterval = "1m"' "$d" >"$b"
    run check_schema "$b"
    assert_failure
    assert_output --partial "the dashboard: error TS2353: Object literal may only specify known properties, and '\"refreshInterval\"'"
    # an enum value Grafana does not know, in a panel's options
    jq '(.panels[] | select(.title == "Nodes to drain") | .options.colorMode) = "red"' "$d" >"$b"
    run check_schema "$b"
    assert_failure
    assert_output --partial "'Nodes to drain' (stat): error TS2322: Type '\"red\"' is not assignable"
    # an option a panel plugin requires, missing in a panel of a collapsed row
    # (the shipped dashboard has none now: fold one panel into a new one)
    jq '(.panels[] | select(.title == "Bus bandwidth vs threshold")) as $p
        | .panels = [.panels[] | select(.title != $p.title)] + [{type: "row", title: "Folded", id: 999, collapsed: true,
            gridPos: {h: 1, w: 24, x: 0, y: 99}, panels: [$p | .options.legend |= del(.placement)]}]' "$d" >"$b"
    run check_schema "$b"
    assert_failure
    assert_output --partial "'Bus bandwidth vs threshold' (timeseries): error TS2741: Property 'placement' is missing"
    # a panel type the check has no types for is refused, not passed
    jq '.panels[1].type = "piechart-ish"' "$d" >"$b"
    run check_schema "$b"
    assert_failure
    assert_output --partial "type 'piechart-ish' has no types in @grafana/schema that this check knows"
}

@test "the panels' queries name the metrics of the source's lists, and the expected ones only in collapsed rows" {
    run node "$chart/hack/health-dashboard.js" --metrics
    assert_success
    metrics=$output
    used=$(jq -r '.. | objects | select(has("expr")) | .expr' "$R/dashboard.json" | grep -o 'slurm_jail_[a-z_]*' | sort -u)
    known=$(jq -r '.today[], .fabric[], .expected[]' <<<"$metrics" | sort -u)
    [ "$used" = "$known" ] || fail "queries use: $used; the source lists: $known"
    # panels over expected metrics wait in collapsed rows
    for m in $(jq -r '.expected[]' <<<"$metrics"); do
        jq -e --arg m "$m" '[.panels[] | select(.type != "row") | .targets[]?.expr | select(contains($m))] == []' \
            "$R/dashboard.json" >/dev/null || fail "$m is used outside a collapsed row"
    done
}
