# SPDX-License-Identifier: Apache-2.0
# Shared by tests/helm/*.bats, which load it at their top (the assertion
# libraries come with it). Tools come from hack/deps/helm.sh.
load /usr/lib/bats/bats-support/load
load /usr/lib/bats/bats-assert/load

root=${SLURM_JAIL_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
# shellcheck source=tests/lib/helm_tools.bash
. "$root/tests/lib/helm_tools.bash"

# render_validated OUT.json [helm template args...]: render the chart (release "t" in
# namespace "hpc"), validate every object against the Kubernetes schemas and
# write them as a JSON array.
render_validated() {
    local out=$1
    shift
    "$helm_bin" template t "$chart" --namespace hpc "$@" >"$out.yaml"
    node "$root/tests/helm/lib/k8s-validate.js" --json "$out" <"$out.yaml"
}

# obj FILE KIND NAME: print one object as JSON (fails if absent).
obj() {
    jq -e --arg k "$2" --arg n "$3" '.[] | select(.kind == $k and .metadata.name == $n)' "$1"
}

# cm_data FILE CONFIGMAP KEY: print one ConfigMap entry.
cm_data() {
    jq -ej --arg n "$2" --arg key "$3" \
        '.[] | select(.kind == "ConfigMap" and .metadata.name == $n) | .data[$key]' "$1"
}

# need_built TARGET FILE: build the CMake TARGET unless FILE exists (tests/run-all
# built everything); fail if it cannot be built.
need_built() {
    [ -e "$2" ] && return 0
    local build=${SLURM_JAIL_BUILD_DIR:-$root/build}
    if ! cmake -S "$root" -B "$build" -DSLURM_JAIL_BUILD_HEALTH=ON -DSLURM_JAIL_WERROR=ON >/dev/null ||
        ! cmake --build "$build" --target "$1" >/dev/null; then
        fail "cannot build $1 in $build (cmake output above)"
    fi
    [ -e "$2" ] || fail "building $1 left no $2"
}
