#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns and in-container scripts
# Consistency between the chart and the images: entrypoints, commands, env
# vars, ports, mount paths and config paths the chart assumes, checked
# statically against docs/contract.md and images/, and inside the images with
# podman (built here by images/build-images when missing).

load helpers

setup_file() {
    require_helm_tools "$root" kubernetes-models
    export R=$BATS_FILE_TMPDIR
    # image.registry=localhost: the refs the images suite builds with podman
    render_validated "$R/all.json" -f "$chart/examples/gpu-two-nodesets.yaml" \
        --set image.registry=localhost --set accounting.enabled=true --set accounting.mariadb.enabled=true
}

setup() {
    images=$root/images
    contract=$root/docs/contract.md
    # the images suite's podman settings (runc, cgroupfs, ulimits)
    # shellcheck source=../../images/lib/podman-env.sh disable=SC1091
    . "$images/lib/podman-env.sh"
}

# container FILE KIND NAME: the first container of a workload, as JSON.
container() {
    obj "$1" "$2" "$3" | jq '(.spec.template.spec // .spec.jobTemplate.spec.template.spec // .spec).containers[0]'
}

# contract_row TEXT: the value column of the contract's paths-and-ports table.
contract_row() {
    grep -F "| $1 |" "$contract" | head -1 | awk -F'|' '{print $3}' | sed 's/`//g; s/^ *//; s/ *$//'
}

podman_image() { # NAME: the chart's ref of slurm-jail/NAME, built when missing
    command -v podman >/dev/null || fail "podman is not installed (hack/install-deps installs it)"
    local ref
    ref=$(jq -r --arg n "$1" '[.[] | .. | .image? | strings | select(test("slurm-jail/" + $n + ":"))][0]' "$R/all.json")
    if ! podman image exists "$ref"; then
        # with the images it is built from (cached ones take seconds)
        local -a names=("$1")
        case $1 in
            worker) names=(build worker) ;;
            populate-jail) names=(build jail populate-jail) ;;
        esac
        "$images/build-images" "${names[@]}" >&2 || fail "images/build-images ${names[*]} failed"
        podman image exists "$ref" || fail "images/build-images ${names[*]} did not make $ref"
    fi
    echo "$ref"
}

prun() { # IMAGE [PODMAN OPTION]... -- [COMMAND ARG...]: a throwaway container without network
    local image=$1
    shift
    local opts=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        opts+=("$1")
        shift
    done
    [ $# -eq 0 ] || shift
    podman run --rm --pull=never --network=none "${opts[@]}" "$image" "$@"
}

@test "contract: ports in the chart are the contract's (slurmctld, slurmd, sshd)" {
    [ "$(contract_row 'slurmctld port')" = 6817 ]
    [ "$(contract_row 'slurmd port')" = 6818 ]
    [ "$(contract_row 'sshd port (login)')" = 22 ]
    container "$R/all.json" StatefulSet t-slurm-cluster-controller | jq -e '.ports == [{"name": "slurmctld", "containerPort": 6817}]' >/dev/null
    container "$R/all.json" StatefulSet t-slurm-cluster-h100 | jq -e '.ports == [{"name": "slurmd", "containerPort": 6818}]' >/dev/null
    container "$R/all.json" StatefulSet t-slurm-cluster-login | jq -e '.ports == [{"name": "ssh", "containerPort": 22}] and (.env | any(.name == "SSHD_PORT" and .value == "22"))' >/dev/null
    conf=$(cm_data "$R/all.json" t-slurm-cluster-slurm-config slurm.conf)
    grep -qx 'SlurmctldPort=6817' <<<"$conf"
    grep -qx 'SlurmdPort=6818' <<<"$conf"
}

@test "contract: mount paths of the jail, Slurm config, munge key, spool, state and health config" {
    [ "$(contract_row 'jail volume mount')" = "/mnt/jail (worker, controller read-only, login, populate)" ]
    container "$R/all.json" StatefulSet t-slurm-cluster-controller | jq -e '.volumeMounts | any(.mountPath == "/mnt/jail" and .readOnly)' >/dev/null ||
        fail "controller: the jail is not mounted read-only"
    for w in "StatefulSet t-slurm-cluster-h100" "StatefulSet t-slurm-cluster-login" "StatefulSet t-slurm-cluster-controller" "Job t-slurm-cluster-populate-jail"; do
        # shellcheck disable=SC2086
        container "$R/all.json" $w | jq -e '.volumeMounts | any(.mountPath == "/mnt/jail")' >/dev/null || fail "$w: no /mnt/jail"
    done
    for w in "StatefulSet t-slurm-cluster-h100" "StatefulSet t-slurm-cluster-login" "StatefulSet t-slurm-cluster-controller"; do
        # shellcheck disable=SC2086
        container "$R/all.json" $w | jq -e '.volumeMounts | any(.mountPath == "/etc/slurm" and .readOnly) and any(.mountPath == "/etc/munge-secret")' >/dev/null ||
            fail "$w: Slurm config or munge key not at the contract's path"
    done
    [[ "$(contract_row 'munge key (Secret)')" == /etc/munge-secret/munge.key* ]]
    obj "$R/all.json" Secret t-slurm-cluster-munge | jq -e '.data | has("munge.key")' >/dev/null
    [ "$(contract_row 'slurmd spool')" = /var/spool/slurmd ]
    container "$R/all.json" StatefulSet t-slurm-cluster-h100 | jq -e '.volumeMounts | any(.mountPath == "/var/spool/slurmd")' >/dev/null
    [ "$(contract_row 'slurmctld state (PVC)')" = /var/spool/slurmctld ]
    container "$R/all.json" StatefulSet t-slurm-cluster-controller | jq -e '.volumeMounts | any(.name == "state" and .mountPath == "/var/spool/slurmctld")' >/dev/null
    [ "$(contract_row 'health-check config')" = /etc/slurm-jail/health.conf ]
    container "$R/all.json" StatefulSet t-slurm-cluster-h100 | jq -e '.volumeMounts | any(.name == "health-config" and .mountPath == "/etc/slurm-jail")' >/dev/null
    obj "$R/all.json" ConfigMap t-slurm-cluster-health-config | jq -e '.data | keys == ["health.conf"]' >/dev/null
    # the Slurm config ConfigMap holds the contract's files
    for f in slurm.conf plugstack.conf gres.conf; do
        cm_data "$R/all.json" t-slurm-cluster-slurm-config "$f" >/dev/null
        grep -F '| Slurm config (ConfigMap, read-only) |' "$contract" | grep -q "$f"
    done
    # plugin defaults the chart relies on (node-local tmp, spool)
    grep -q '| `tmp=DIR` | `/var/lib/slurm-jail/tmp` |' "$root/README.md"
    container "$R/all.json" StatefulSet t-slurm-cluster-h100 | jq -e '.volumeMounts | any(.mountPath == "/var/lib/slurm-jail/tmp")' >/dev/null
}

@test "contract: login host keys and authorized keys paths match the chart and the login image" {
    [[ "$(contract_row 'SSH host keys (Secret)')" == /etc/ssh/host-keys/ssh_host_* ]]
    [[ "$(contract_row 'authorized keys from values (Secret)')" == "/etc/ssh/authorized-keys/<user>" ]]
    c=$(container "$R/all.json" StatefulSet t-slurm-cluster-login)
    jq -e '.volumeMounts | any(.name == "host-keys" and .mountPath == "/etc/ssh/host-keys")' <<<"$c" >/dev/null
    jq -e '.volumeMounts | any(.name == "authorized-keys" and .mountPath == "/etc/ssh/authorized-keys")' <<<"$c" >/dev/null
    grep -Eq '^AuthorizedKeysFile .*/etc/ssh/authorized-keys/%u' "$images/login/sshd_config"
    # sessions enter the jail through PAM (pam_slurm_jail.so), not a chroot
    grep -Eq '^UsePAM yes$' "$images/login/sshd_config"
    run grep -E '^ChrootDirectory' "$images/login/sshd_config"
    assert_failure
    grep -Eq '^account +required +pam_slurm_jail.so$' "$images/login/pam.d/sshd"
    grep -Eq '^session +required +pam_slurm_jail.so$' "$images/login/pam.d/sshd"
    grep -q '^COPY login/pam.d/sshd /etc/pam.d/sshd$' "$images/login/Containerfile"
    grep -q 'host_keys_dir=${SSH_HOST_KEYS_DIR:-/etc/ssh/host-keys}' "$images/login/slurm-jail-login-entrypoint"
    grep -q 'ssh_host_\*_key' "$images/login/slurm-jail-login-entrypoint"
}

@test "images/: entrypoints and commands the chart relies on exist as the contract says" {
    # worker: ENTRYPOINT slurm-jail-entrypoint; roles slurmd and slurmctld; env
    grep -q '^ENTRYPOINT \["/usr/local/bin/slurm-jail-entrypoint"\]' "$images/worker/Containerfile"
    grep -Eq '^\s*slurmd \| slurmctld\)' "$images/worker/slurm-jail-entrypoint"
    grep -q 'SLURMD_EXTRA_ARGS' "$images/worker/slurm-jail-entrypoint"
    grep -q 'SLURM_NODENAME:-$(hostname)' "$images/worker/slurm-jail-entrypoint"
    grep -q 'munge_secret=${MUNGE_KEY_FILE:-/etc/munge-secret/munge.key}' "$images/lib/entrypoint-lib.sh"
    grep -q 'slurm_conf=${SLURM_CONF:-/etc/slurm/slurm.conf}' "$images/lib/entrypoint-lib.sh"
    grep -q 'jail=${SLURM_JAIL_PATH:-/mnt/jail}' "$images/lib/entrypoint-lib.sh"
    # the chart passes roles as args, keeping the images' ENTRYPOINT
    container "$R/all.json" StatefulSet t-slurm-cluster-h100 | jq -e '.args == ["slurmd"] and (has("command") | not)' >/dev/null
    container "$R/all.json" StatefulSet t-slurm-cluster-controller | jq -e '.args == ["slurmctld"] and (has("command") | not)' >/dev/null
    container "$R/all.json" StatefulSet t-slurm-cluster-h100 | jq -e '.env | any(.name == "SLURMD_EXTRA_ARGS")' >/dev/null
    # login: ENTRYPOINT slurm-jail-login-entrypoint, reads SSHD_PORT
    grep -q '^ENTRYPOINT \["/usr/local/bin/slurm-jail-login-entrypoint"\]' "$images/login/Containerfile"
    grep -q 'SSHD_PORT:-22' "$images/login/slurm-jail-login-entrypoint"
    container "$R/all.json" StatefulSet t-slurm-cluster-login | jq -e '(has("command") | not) and (has("args") | not)' >/dev/null
    # populate-jail: ENTRYPOINT populate-jail, the jail rootfs at /jail-rootfs, the options the Job passes
    grep -q '^ENTRYPOINT \["/usr/local/bin/populate-jail"\]' "$images/populate_jail/Containerfile"
    grep -q '^COPY --from=jail / /jail-rootfs$' "$images/populate_jail/Containerfile"
    for opt in --source --target --preserve --dry-run; do
        grep -q -- "^ *$opt" "$images/populate_jail/populate-jail" || fail "populate-jail has no $opt"
    done
    grep -q 'populate-jail --source /jail-rootfs --target /mnt/jail \[--preserve PATH\]... \[--dry-run\]' "$contract"
}

@test "image names and tags: the chart's defaults are the contract's names at the project version and the default Slurm release" {
    version=$(sed -n 's/^project(slurm-jail VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
    [ -n "$version" ]
    grep -qx "appVersion: \"$version\"" "$chart/Chart.yaml"
    # the chart's default release is the one images/build-images builds by
    # default (the images CI builds are the ones the chart runs)
    release=$(sed -n 's/^  release: "\(.*\)"$/\1/p' "$chart/values.yaml")
    # shellcheck source=../../hack/lib/slurm-releases.sh
    assert_equal "$release" "$(. "$root/hack/lib/slurm-releases.sh" && echo "$SLURM_JAIL_DEFAULT_RELEASE")"
    tag=$version-slurm$release
    run jq -r '[.[] | .. | .image? | strings | select(contains("slurm-jail/"))] | unique | .[]' "$R/all.json"
    assert_output - <<OUT
localhost/slurm-jail/login:$tag
localhost/slurm-jail/populate-jail:$tag
localhost/slurm-jail/worker:$tag
OUT
    container "$R/all.json" StatefulSet t-slurm-cluster-login | jq -e --arg t "$tag" '.image == "localhost/slurm-jail/login:" + $t' >/dev/null
    for n in jail populate-jail worker login; do
        grep -q "| \`$n\` |" "$contract" || fail "image $n not in the contract"
    done
}

@test "worker image: has everything the chart's scripts and slurm.conf name" {
    ref=$(podman_image worker)
    run prun "$ref" --entrypoint /bin/sh -- -c '
        for c in scontrol squeue sinfo srun slurmd slurmctld runuser install /usr/sbin/munged; do
            command -v "$c" >/dev/null || echo "missing command: $c"
        done
        [ -f /usr/lib/x86_64-linux-gnu/slurm-wlm/chroot.so ] || echo "missing chroot.so in PluginDir"
        [ -f /usr/lib/x86_64-linux-gnu/slurm-wlm/job_container_slurm_jail.so ] ||
            [ -f /usr/lib/x86_64-linux-gnu/slurm-wlm/namespace_slurm_jail.so ] || echo "missing the job container plugin in PluginDir"
        id -u munge >/dev/null 2>&1 || echo "missing user munge"
        id -u root >/dev/null 2>&1 || echo "missing SlurmUser root"
        [ -d /var/lib/slurm-jail ] || [ -d /var/lib ] || echo "no /var/lib"
        echo checked'
    assert_success
    assert_output "checked"
}

@test "worker image: the chart's with-munge starts munged with the chart's munge key" {
    ref=$(podman_image worker)
    d=$BATS_TEST_TMPDIR
    mkdir -p "$d/munge-secret" "$d/scripts"
    jq -r '.[] | select(.kind == "Secret" and .metadata.name == "t-slurm-cluster-munge") | .data["munge.key"]' "$R/all.json" | base64 -d >"$d/munge-secret/munge.key"
    for f in with-munge node-lifecycle health-check; do
        cm_data "$R/all.json" t-slurm-cluster-scripts "$f" >"$d/scripts/$f"
        chmod 0755 "$d/scripts/$f"
    done
    run prun "$ref" -v "$d/munge-secret:/etc/munge-secret:ro" -v "$d/scripts:/opt/slurm-jail-chart:ro" \
        --entrypoint /opt/slurm-jail-chart/with-munge -- sh -c 'echo ping | munge | unmunge | grep -E "^(STATUS|ping)"'
    assert_success
    assert_line --partial "STATUS:"
    assert_line --partial "Success (0)"
    assert_line "ping"
}

@test "worker image: the HealthCheckProgram wrapper runs under the image's /bin/sh" {
    ref=$(podman_image worker)
    d=$BATS_TEST_TMPDIR
    mkdir -p "$d/scripts"
    cm_data "$R/all.json" t-slurm-cluster-scripts health-check >"$d/scripts/health-check"
    chmod 0755 "$d/scripts/health-check"
    # both checks are the image's programs, at the paths the chart runs
    local fs gpu
    fs=$(sed -n 's/.*SLURM_JAIL_FS_CHECK:-\([^}]*\)}.*/\1/p' "$d/scripts/health-check")
    gpu=$(sed -n 's/.*SLURM_JAIL_GPU_CHECK:-\([^}]*\)}.*/\1/p' "$d/scripts/health-check")
    [ "$fs" = /usr/sbin/slurm-jail-fs-check ] && [ "$gpu" = /usr/sbin/slurm-jail-gpu-check ]
    run prun "$ref" --entrypoint /bin/sh -- -c 'for p in "$@"; do [ -x "$p" ] || echo "missing $p"; done; echo checked' sh "$fs" "$gpu"
    assert_output checked
    # a check that could not do its work (exit 2) fails the program; one that drained the node (1) does not
    printf '#!/bin/sh\nexit %s\n' 2 >"$d/scripts/exit2"
    printf '#!/bin/sh\nexit %s\n' 1 >"$d/scripts/exit1"
    chmod 0755 "$d/scripts/exit2" "$d/scripts/exit1"
    run prun "$ref" -v "$d/scripts:/opt/slurm-jail-chart:ro" -e SLURMD_NODENAME=t-slurm-cluster-cpu-0 \
        -e SLURM_JAIL_FS_CHECK=/bin/true --entrypoint /opt/slurm-jail-chart/health-check --
    assert_success
    run prun "$ref" -v "$d/scripts:/opt/slurm-jail-chart:ro" -e SLURMD_NODENAME=t-slurm-cluster-h100-0 \
        -e SLURM_JAIL_FS_CHECK=/opt/slurm-jail-chart/exit1 -e SLURM_JAIL_GPU_CHECK=/opt/slurm-jail-chart/exit1 \
        --entrypoint /opt/slurm-jail-chart/health-check --
    assert_success
    run prun "$ref" -v "$d/scripts:/opt/slurm-jail-chart:ro" -e SLURMD_NODENAME=t-slurm-cluster-h100-0 \
        -e SLURM_JAIL_FS_CHECK=/bin/true -e SLURM_JAIL_GPU_CHECK=/opt/slurm-jail-chart/exit2 \
        --entrypoint /opt/slurm-jail-chart/health-check --
    assert_failure
}

@test "login image: its sshd config test passes with the chart's generated host keys mounted as the chart mounts them" {
    ref=$(podman_image login)
    d=$BATS_TEST_TMPDIR
    mkdir -p "$d/host-keys" "$d/authorized-keys"
    for k in ecdsa rsa; do
        obj "$R/all.json" Secret t-slurm-cluster-ssh-host-keys | jq -r --arg k "ssh_host_${k}_key" '.data[$k]' | base64 -d >"$d/host-keys/ssh_host_${k}_key"
    done
    chmod 0400 "$d"/host-keys/*
    obj "$R/all.json" Secret t-slurm-cluster-authorized-keys | jq -j '.stringData.alice' >"$d/authorized-keys/alice"
    run prun "$ref" -v "$d/host-keys:/etc/ssh/host-keys:ro" -v "$d/authorized-keys:/etc/ssh/authorized-keys:ro" \
        --entrypoint /bin/sh -- -c 'install -d -m 0755 /run/sshd &&
            /usr/sbin/sshd -t -f /etc/ssh/sshd_config -h /etc/ssh/host-keys/ssh_host_ecdsa_key -h /etc/ssh/host-keys/ssh_host_rsa_key &&
            echo "sshd -t ok"'
    assert_success
    assert_output --partial "sshd -t ok"
    refute_output --partial "Unable to load host key"
}

@test "populate-jail image: the Job's --source holds the jail's release file" {
    ref=$(podman_image populate-jail)
    src=$(obj "$R/all.json" Job t-slurm-cluster-populate-jail | jq -r '.spec.template.spec.containers[0].args[1]')
    [ "$src" = /jail-rootfs ]
    run prun "$ref" --entrypoint /bin/sh -- -c "test -s $src/etc/slurm-jail-release && populate-jail --help"
    assert_success
    assert_output --partial "--preserve PATH"
}

@test "worker image: slurmdbd for accounting (accounting.image defaults to the worker image)" {
    ref=$(podman_image worker)
    obj "$R/all.json" StatefulSet t-slurm-cluster-slurmdbd | jq -e --arg r "$ref" '.spec.template.spec.containers[0].image == $r and .spec.template.spec.containers[0].command == ["/opt/slurm-jail-chart/with-munge", "slurmdbd", "-D"]' >/dev/null
    run prun "$ref" --entrypoint /bin/sh -- -c 'command -v slurmdbd'
    assert_success # the worker image installs the Debian package slurmdbd
    assert_output /usr/sbin/slurmdbd
}
