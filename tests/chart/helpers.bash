# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034 # variables used by the .bats files
# Shared by tests/chart/*.bats: the Helm chart's own rendered objects run on
# podman by hack/kube-run (one release per test file, in its own state
# directory and network namespaces).
load /usr/lib/bats/bats-support/load
load /usr/lib/bats/bats-assert/load

root=${SLURM_JAIL_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
kube_run=$root/hack/kube-run
# shellcheck source=../../images/lib/podman-env.sh
. "$root/images/lib/podman-env.sh"
# shellcheck source=../lib/helm_tools.bash
. "$root/tests/lib/helm_tools.bash"

# note and elapsed_since: the measurements printed as TAP comments.
# shellcheck source=../lib/elapsed.bash
. "$root/tests/lib/elapsed.bash"

# The images the chart runs, built from this checkout, once per run of the
# chart's files (a rebuild from podman's layer cache still takes 15-30 s).
build_images() {
    local start built=$BATS_RUN_TMPDIR/chart-images-built
    [ ! -f "$built" ] || return 0
    start=$EPOCHREALTIME
    "$root/images/build-images" >/dev/null
    note "images/build-images: $(elapsed_since "$start") s"
    : >"$built"
}

# kr ARGS...: kube-run on this file's release.
kr() { "$kube_run" --state "$KR_STATE" "$@"; }

# release_start VALUES...: render the chart (release t, namespace hpc) with
# the chart's own helm, against kube-run's applied objects, and install it.
release_start() {
    export KR_STATE=$BATS_FILE_TMPDIR/release
    local start
    start=$EPOCHREALTIME
    kube_run_render "$BATS_FILE_TMPDIR/install.yaml" "$@"
    kr apply -f "$BATS_FILE_TMPDIR/install.yaml" 2>"$BATS_FILE_TMPDIR/install.log" || {
        cat "$BATS_FILE_TMPDIR/install.log" >&2
        return 1
    }
    note "kube-run apply (install): $(elapsed_since "$start") s"
}

# kube_run_render OUT [HELM TEMPLATE ARGS...]: the chart (release "t" in
# namespace "hpc") rendered through `kube-run render`, whose lookups see the
# objects this file's release holds, written to OUT for `kr apply` (not
# validated against the Kubernetes schemas: tests/helm's render_validated).
kube_run_render() {
    local out=$1
    shift
    kr render -- t "$chart" -n hpc "$@" >"$out"
}

release_stop() {
    [ -n "${KR_STATE:-}" ] || return 0
    kr uninstall --now --purge >/dev/null 2>&1 || true
}

# On a failed test: the pods and their last log lines.
dump_release() {
    [ -z "${BATS_TEST_COMPLETED:-}" ] || return 0
    [ -n "${KR_STATE:-}" ] || return 0
    kr get || true
    local p
    for p in $(kr get 2>/dev/null | cut -f1); do
        echo "--- kube-run logs $p (last 15 lines)"
        kr logs "$p" 2>&1 | tail -15
    done
}

ctl() { kr exec t-slurm-cluster-controller-0 -- "$@"; }

# wait_for_nodes N [STATE [SECONDS]]: until N nodes are in STATE (default
# idle), for at most SECONDS (default 60).
wait_for_nodes() {
    local want=$1 state=${2:-idle} have=0
    for _ in $(seq 1 $((${3:-60} * 2))); do
        have=$(ctl sinfo -h -N -o '%N %T' 2>/dev/null | grep -c " $state\$" || true)
        [ "$have" -ne "$want" ] || return 0
        sleep 0.5
    done
    ctl sinfo -N >&2 || true
    echo "$have nodes $state, wanted $want" >&2
    return 1
}

# node_states: "NODE STATE" lines of every node slurmctld knows.
node_states() { ctl sinfo -h -N -o '%N %T' | sort; }

# SSH keys of the test users, and a values file that authorizes them.
make_user_keys() {
    local d=$BATS_FILE_TMPDIR/keys
    mkdir -p "$d"
    ssh-keygen -q -t ed25519 -N '' -C testuser -f "$d/testuser"
    ssh-keygen -q -t ed25519 -N '' -C mallory -f "$d/mallory"
    cat >"$BATS_FILE_TMPDIR/keys.yaml" <<EOF
login:
  authorizedKeys:
    testuser: ["$(cat "$d/testuser.pub")"]
    mallory: ["$(cat "$d/mallory.pub")"] # not in the jail's passwd
EOF
}

# known_hosts for the login Service from the host keys the chart rendered.
make_known_hosts() {
    local manifest=$1 ip k
    ip=$(kr ip t-slurm-cluster-login)
    : >"$BATS_FILE_TMPDIR/known_hosts"
    for k in ecdsa rsa; do
        secret_data "$manifest" t-slurm-cluster-ssh-host-keys "ssh_host_${k}_key" >"$BATS_FILE_TMPDIR/host_$k"
        chmod 0600 "$BATS_FILE_TMPDIR/host_$k"
        echo "$ip $(ssh-keygen -y -f "$BATS_FILE_TMPDIR/host_$k")" >>"$BATS_FILE_TMPDIR/known_hosts"
    done
}

# secret_data MANIFEST SECRET KEY: a key of a rendered Secret, decoded.
secret_data() {
    node -e '
        const YAML = require("yaml");
        const [file, name, key] = process.argv.slice(1);
        for (const d of YAML.parseAllDocuments(require("fs").readFileSync(file, "utf8"))) {
            const o = d.toJSON();
            if (o && o.kind === "Secret" && o.metadata.name === name) process.stdout.write(Buffer.from(o.data[key], "base64"));
        }' "$@"
}

# login_ssh USER [SSH OPTIONS...] -- COMMAND: ssh to the login Service from
# a client on the cluster network, checking the chart's host key.
login_ssh() {
    local user=$1 ip
    shift
    local -a opts=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    ip=$(kr ip t-slurm-cluster-login)
    timeout 120 nsenter --net="$(kr netns)" ssh -F /dev/null \
        -o UserKnownHostsFile="$BATS_FILE_TMPDIR/known_hosts" -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -o ConnectTimeout=20 "${opts[@]}" "$user@$ip" "$@"
}

as_testuser() { login_ssh testuser -i "$BATS_FILE_TMPDIR/keys/testuser" -- "$@"; }
