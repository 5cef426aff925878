# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The tools the chart's suites (tests/helm, tests/chart) need, as
# hack/deps/helm.sh installs them under the checkout's .tools/.

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
