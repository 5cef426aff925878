# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2154,SC2034 # chart, render_validated, root: from helpers.bash; golden_dir: used by arch.bats
# Golden renderings of single-architecture (amd64) clusters, kept in
# tests/helm/golden/: the default values and every example values file, as
# the chart rendered them before it knew other architectures. A
# single-architecture cluster must render exactly as before, so that an
# upgrade to a chart with mixed-architecture support changes nothing in a
# running one.
#
# After a deliberate change to what such a cluster renders, rewrite them
# (and review the diff):
#   SLURM_JAIL_GOLDEN_UPDATE=1 bats tests/helm/arch.bats -f golden

golden_dir=$root/tests/helm/golden

# golden_cases: NAME and values file ("-": the defaults), one per line; the
# examples that give a nodeset an `arch` (mixed clusters) are not golden.
golden_cases() {
    echo "default -"
    local f
    for f in "$chart"/examples/*.yaml; do
        grep -Eq '^[[:space:]]+arch:' "$f" && continue
        echo "$(basename "$f" .yaml) $f"
    done
}

# golden_render NAME VALUES OUT: render, mask what the chart generates anew on
# every offline render (the data of the Secrets it keeps), sort keys.
golden_render() {
    local args=()
    [ "$2" = - ] || args=(-f "$2")
    render_validated "$3.raw" "${args[@]}" || return 1
    jq -S 'map(if .kind == "Secret" and .metadata.annotations["helm.sh/resource-policy"] == "keep"
                then .data |= map_values("<generated>") else . end)' "$3.raw" >"$3"
}
