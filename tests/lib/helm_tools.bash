# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The tools the chart's suites (tests/helm, tests/chart) need, as
# hack/deps/helm.sh installs them under the checkout's .tools/, and the
# chart. Sourced after the suite has set $root, the checkout.

# shellcheck disable=SC2034 # used by the suites that source this
chart=${root:?the suite sets root, the checkout, before it sources helm_tools.bash}/helm/slurm-cluster
# shellcheck disable=SC2034
helm_bin=$root/.tools/bin/helm
export NODE_PATH=$root/.tools/node/node_modules

# require_helm_tools ROOT PACKAGE: ROOT/.tools has helm and the node package
# PACKAGE (kubernetes-models for the schema checks, yaml for kube-run);
# otherwise fails, saying which is missing and how to install it.
require_helm_tools() {
    local tools=$1/.tools
    if [ ! -x "$tools/bin/helm" ] || [ ! -d "$tools/node/node_modules/$2" ]; then
        echo "helm ($tools/bin/helm) or the node package $2 ($tools/node/node_modules/$2) is missing: run hack/deps/helm.sh" >&2
        return 1
    fi
}
