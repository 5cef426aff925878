# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared by the e2e tests: paths of the local cluster and ways to run jobs.
# The settings are used by the .bats files; $output comes from bats' run.
# shellcheck disable=SC2034,SC2154

load_assertions() {
    load /usr/lib/bats/bats-support/load.bash
    load /usr/lib/bats/bats-assert/load.bash
}

LC=$SLURM_JAIL_ROOT/hack/local-cluster
STATE=${SLURM_JAIL_LOCAL_DIR:-/var/lib/slurm-jail-local}
JAIL=$STATE/jail
# The cluster's test users (SLURM_JAIL_LOCAL_USERS: users.sh).
# shellcheck source=hack/lib/local-cluster/users.sh
. "$SLURM_JAIL_ROOT/hack/lib/local-cluster/users.sh"
TEST_USER=$LC_USER
TEST_UID=$LC_UID
EXTRA_GROUP=$LC_GROUP_EXTRA
EXTRA_GID=$LC_GID_EXTRA
NOJAIL_USER=$LC_USER_NOJAIL
NOJAIL_UID=$LC_UID_NOJAIL
HOME_IN_JAIL=/home/$TEST_USER
HOST_HOME=$JAIL$HOME_IN_JAIL
# A file that exists only in the jail, and a path that exists only on the host.
MARKER=/etc/slurm-jail-release
HOST_ONLY=$SLURM_JAIL_ROOT/hack/local-cluster
# The probe prints "in-jail NODE" and, if it can see the host, "HOST-VISIBLE".
PROBE=$HOME_IN_JAIL/e2e-probe
PLUGSTACK_LINE='required chroot.so jail=/mnt/jail'

# The cluster's Slurm release runs from a rootfs of its own
# (local-cluster up --slurm), or from this machine (empty).
RELEASE_ROOTFS=$(cat "$STATE/release-rootfs" 2>/dev/null || true)
# Where the plugins the cluster runs were built: build-REL beside the build
# directory for another release (hack/build-release).
CLUSTER_BUILD=${SLURM_JAIL_BUILD_DIR:-$SLURM_JAIL_ROOT/build}
if [ -n "$RELEASE_ROOTFS" ]; then CLUSTER_BUILD=$CLUSTER_BUILD-$(cat "$STATE/release"); fi
# The PAM module the SSH tests give sshd: built for the cluster's release.
PAM_MODULE=$CLUSTER_BUILD/plugin/pam/pam_slurm_jail.so
# The cluster's Slurm release (major.minor) and a test of it:
# cluster_release_at_least 25.11.
CLUSTER_RELEASE=$(cat "$STATE/release" 2>/dev/null ||
    dpkg-query -W -f='${Version}' slurmd 2>/dev/null | cut -d. -f1,2)
# shellcheck source=hack/lib/slurm-releases.sh
. "$SLURM_JAIL_ROOT/hack/lib/slurm-releases.sh"
cluster_release_at_least() { release_at_least "$CLUSTER_RELEASE" "$1"; }
# Slurm's pam_slurm_adopt.so, as the nodes' root has it (Debian 12 puts it in
# /lib/security, later releases in the multiarch PAM directory).
PAM_SLURM_ADOPT=/lib/security/pam_slurm_adopt.so
if [ ! -e "$RELEASE_ROOTFS$PAM_SLURM_ADOPT" ]; then
    PAM_SLURM_ADOPT=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/security/pam_slurm_adopt.so
fi

# The container files (33, 35) start the cluster with `up --fake-gpu
# --containers` on this machine's own Slurm release; local-cluster builds
# the fake GPU drivers for that release only, so on another one
# (SLURM_JAIL_LOCAL_SLURM) they start it with --containers alone, and their
# GPU tests skip (skip_unless_fake_gpu).
containers_up_args() {
    local host
    host=$(dpkg-query -W -f='${Version}' slurmd 2>/dev/null | cut -d. -f1,2)
    if [ -z "${SLURM_JAIL_LOCAL_SLURM:-}" ] || [ "$SLURM_JAIL_LOCAL_SLURM" = "$host" ]; then echo --fake-gpu; fi
    echo --containers
}
# (on this machine's release the GPU tests run, and fail without a fake GPU)
fake_gpu_release() { [ "$(containers_up_args | head -n 1)" = --fake-gpu ]; }
skip_unless_fake_gpu() {
    fake_gpu_release ||
        skip "no fake GPU on Slurm $CLUSTER_RELEASE: local-cluster up --fake-gpu runs on this machine's release only"
}

# sshd_config_for_refusal_tests: sshd_config lines for a test sshd that is
# refused logins on purpose. OpenSSH 9.8 and later (Debian 13 on) stop taking
# connections from an address after a few failed logins, and every test
# client connects from the same one.
sshd_config_for_refusal_tests() {
    if grep -q PerSourcePenalties "$RELEASE_ROOTFS/usr/sbin/sshd"; then
        echo 'PerSourcePenalties no'
    fi
}

# jail_changed_elsewhere: the jail root's owner or mode was just changed
# through this machine's client of the jail's filesystem. On a network
# filesystem (tests/shared-fs) a node's checks use the attributes its kernel
# holds, which its next probe refreshes (chroot.so's recheck=, default 60 s);
# the tests do not wait that long: they drop each node's last answer, as if
# recheck= seconds had passed. A local jail sees the change at once anyway.
jail_changed_elsewhere() { rm -f "$STATE"/nodes/*/run/jail-probe; }

# shellcheck source=tests/lib/elapsed.bash
. "$SLURM_JAIL_ROOT/tests/lib/elapsed.bash"

install_probe() {
    cat >"$JAIL$PROBE" <<PROBE_EOF
#!/bin/sh
if [ -f $MARKER ]; then echo "in-jail \$(hostname)"; else echo "NOT-IN-JAIL \$(hostname)"; fi
if [ -e $HOST_ONLY ]; then echo "HOST-VISIBLE \$(hostname)"; fi
PROBE_EOF
    chmod 0755 "$JAIL$PROBE"
}

# The cluster each file runs on. Most run on the suite's (setup_suite's
# plain 'up'); a file that needs other settings (the SLURM_JAIL_LOCAL_*
# variables of hack/local-cluster: chroot.so's plugstack line, the job
# container, cgroups; or up's options: fake GPUs, containers, more workers)
# asks for them in its setup_file, and every other file asks for the
# suite's: each e2e file's setup_file calls use_cluster. The cluster is
# restarted only when the settings asked for are not those it runs with, so
# no file restores the suite's cluster when it ends: the next file that
# needs it does. tests/run-all runs the files of the suite's cluster first.
# use_cluster records the settings with the slurmctld it started; a
# slurmctld started any other way (a plain 'up') runs the suite's.
CLUSTER_SETTINGS=$STATE/e2e-cluster-settings

# use_cluster [VAR=VALUE...] [UP-OPTION...]: the cluster started with these
# settings (none: the suite's), restarted only if it runs with others or is
# not up (a former file's failed test may have left it down).
use_cluster() {
    local settings="$*" vars=()
    if cluster_is_up && [ "$(cluster_settings)" = "$settings" ]; then
        return 0
    fi
    while [ $# -gt 0 ] && [[ $1 == [A-Z_]*=* ]]; do
        vars+=("$1")
        shift
    done
    "$LC" down >&2
    env "${vars[@]}" "$LC" up "$@" >&2
    install_probe
    printf '%s\n%s\n' "$(cluster_ctld_pid)" "$settings" >"$CLUSTER_SETTINGS"
}

# cluster_settings: what use_cluster started the running slurmctld with;
# nothing (the suite's settings) when it started it with none, or did not
# start it.
cluster_settings() {
    local pid settings
    { read -r pid && IFS= read -r settings; } <"$CLUSTER_SETTINGS" 2>/dev/null || return 0
    if [ "$pid" = "$(cluster_ctld_pid)" ]; then printf '%s' "$settings"; fi
}

cluster_ctld_pid() { pid_in "$STATE/ctld/slurmctld.pid" 2>/dev/null; }

# cluster_is_up: slurmctld and every node's slurmd of this cluster run.
cluster_is_up() {
    local i workers
    workers=$(cat "$STATE/workers" 2>/dev/null) || return 1
    kill -0 "$(cluster_ctld_pid)" 2>/dev/null || return 1
    for ((i = 1; i <= workers; i++)); do
        kill -0 "$(slurmd_pid "node$i" 2>/dev/null)" 2>/dev/null || return 1
    done
}

# ush SCRIPT: run a bash script as the test user on the login host (in the jail).
ush() { "$LC" run -- bash -c "$1"; }

# A fresh working directory per test, inside the user's home in the jail.
make_test_dir() {
    T=e2e-$BATS_SUITE_TEST_NUMBER
    ush "rm -rf $T && mkdir -p $T"
}

# setup_job_test: a job test's setup: assertions and a fresh working directory.
setup_job_test() {
    load_assertions
    make_test_dir
}

# cancel_test_jobs: a job test's teardown: cancels every job of the test user.
cancel_test_jobs() { ush "scancel -u $TEST_UID" || true; }

# set_plugstack TEXT: the cluster's plugstack.conf becomes TEXT, for every
# following step and job epilog; replaced whole (a new file renamed over the
# old), so that no reader sees it half written. A test that changes it
# restores it in its teardown: set_plugstack "$PLUGSTACK_LINE".
set_plugstack() {
    local conf=$STATE/etc/plugstack.conf
    echo "$1" >"$conf.new"
    chmod 0644 "$conf.new"
    mv -f "$conf.new" "$conf"
}

# assert_in_jail N: the probe's output shows N tasks in the jail, none on the host.
assert_in_jail() {
    assert_equal "$(grep -c '^in-jail node' <<<"$output")" "$1"
    refute_output --partial NOT-IN-JAIL
    refute_output --partial HOST-VISIBLE
}

# wait_until SECONDS CMD...: poll CMD every 0.2 s; fail after SECONDS.
wait_until() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "timed out waiting for: $*" >&2; return 1; }
        sleep 0.2
    done
}

# pid_in FILE: the pid a Slurm daemon's pid file names: its first line.
# From Slurm 24.11 on, the process a reconfigure starts rewrites the file
# without truncating it, so a longer old pid leaves its tail on a second line.
pid_in() { head -n 1 "$1"; }

slurmd_pid() { pid_in "$STATE/nodes/$1/spool/slurmd.pid"; }
# on_node NODE CMD...: CMD in NODE's mount, UTS and network namespaces (as root).
on_node() { nsenter -t "$(slurmd_pid "$1")" -m -u -n -- "${@:2}"; }

# Mount table of a node's own mount namespace (where slurmstepd runs).
# Mounts of podman containers (other suites, and private stores such as
# /var/lib/containers-NAME) copied in at node start are left out: they come
# and go with those containers. So are other tools' network namespace
# handles below /run/netns (kube-run's pods, from the chart suite): the
# host's /run/netns propagates into the node, and the cluster keeps its own
# handles in its state directory. So are the mounts below other local
# clusters' state directories (/var/lib/slurm-jail-*: compat's and
# slurm-testsuite's, up beside this one), which propagate the same way as
# those clusters come and go. A host file bound into the node (/etc/passwd)
# shows as FILE//deleted once anything on the host replaces it (useradd in a
# suite beside this one): still the same mount, so the marker is dropped.
node_mounts() {
    nsenter -t "$(slurmd_pid "$1")" -m findmnt -rn -o TARGET,SOURCE,FSTYPE |
        grep -v -E '^/var/lib/containers(-[^/ ]+)?/|^/run/netns/|^/tmp/mmdebstrap\.[^/ ]+[/ ]' |
        sed 's|//deleted\]|]|' |
        awk -v own="$STATE/" 'index($1, "/var/lib/slurm-jail-") != 1 || index($1, own) == 1' | sort
}

# node_mounts without the plugin's namespace files (the node's, rebuilt when
# settings change, and each job's, which come and go with the jobs).
node_mounts_but_namespaces() {
    node_mounts "$1" | grep -v -e ' nsfs\[mnt:' -e '^/run/slurm-jail/jobs/' || true
}

# The host's mounts that concern the jail or this cluster's state (not those
# of another local cluster, such as the slurm-testsuite suite's beside it).
host_jail_mounts() {
    findmnt -rn -o TARGET,SOURCE,FSTYPE | grep -E "^$STATE/|^/mnt/jail|^/run/slurm-jail" | sort || true
}

# netns_pids NAME...: pids of all processes in these cluster hosts' netns.
netns_pids() {
    local ids=() n p
    for n in "$@"; do ids+=("net:[$(stat -L -c %i "$STATE/netns/$n")]"); done
    for p in /proc/[0-9]*; do
        printf '%s\n' "${ids[@]}" | grep -qxF "$(readlink "$p/ns/net" 2>/dev/null)" && echo "${p#/proc/}"
    done
    return 0
}

# Only slurmd itself is left on the node (and, with the jail on GlusterFS,
# the node's client of it).
node_is_idle() {
    [ "$(netns_pids "$1" | grep -vxF -f <(pgrep -f '^glusterfs --volfile-server=' || echo none))" = "$(slurmd_pid "$1")" ]
}

# Processes of the test user anywhere in the cluster (nodes and login).
user_pids_in_cluster() {
    local p
    for p in $(netns_pids login node1 node2); do
        [ "$(stat -c %u "/proc/$p" 2>/dev/null)" = "$TEST_UID" ] && echo "$p"
    done
    return 0
}

slurmd_fds() { find "/proc/$(slurmd_pid "$1")/fd" -mindepth 1 | wc -l; }

# A second user, for one user's job against another's.
OTHER_USER=$LC_USER2
OTHER_UID=$LC_UID2
ush_other() { "$LC" run --user "$OTHER_USER" -- bash -c "$1"; }
# cancel_both_users_jobs: the teardown of a test that runs jobs as both
# users: cancels every job of the test user and of the second user.
cancel_both_users_jobs() {
    cancel_test_jobs
    ush_other "scancel -u $OTHER_UID" || true
}

# Where chroot.so keeps a job's namespaces on a node (state=/run/slurm-jail
# in the node is $STATE/nodes/NODE/run on the host).
job_state_dir() { echo "$STATE/nodes/$1/run/jobs/$2"; }
# job_ns_inode NODE JOB KIND: inode of the job's kept namespace KIND (tasks,
# stepd, pid); the nsfs binds are seen only in the node's mount namespace.
job_ns_inode() {
    nsenter -t "$(slurmd_pid "$1")" -m -- stat -L -c %i "/run/slurm-jail/jobs/$2/$3"
}
# in_job_view NODE JOB CMD...: run CMD as root in the job's tasks view.
in_job_view() {
    local node=$1 job=$2
    shift 2
    nsenter -t "$(slurmd_pid "$node")" -m -- nsenter --mount="/run/slurm-jail/jobs/$job/tasks" -- "$@"
}
job_state_entries() { find "$STATE"/nodes/node*/run/jobs -mindepth 1 -maxdepth 1 2>/dev/null; }

# as_user_on_node NODE CMD...: run CMD as the test user in the node's own
# namespaces (as slurmd sees the node: outside the jail), in the background.
as_user_on_node() {
    local node=$1
    shift
    nsenter -t "$(slurmd_pid "$node")" -m -u -n -- \
        setpriv --reuid="$TEST_UID" --regid="$TEST_UID" --clear-groups -- "$@" </dev/null >/dev/null 2>&1 3>&- &
}

# restart_slurmd NODE: stop the node's slurmd and start it again, as
# hack/local-cluster does; waits until the node is idle.
restart_slurmd() {
    local pid
    pid=$(slurmd_pid "$1")
    kill "$pid"
    # As local-cluster stops it: TERM, then KILL after a while.
    wait_until 15 bash -c "! kill -0 $pid 2>/dev/null" || kill -KILL "$pid" 2>/dev/null || true
    wait_until 10 bash -c "! kill -0 $pid 2>/dev/null"
    nsenter --net="$STATE/netns/$1" -- unshare --mount --uts --propagation private -- \
        "$SLURM_JAIL_ROOT/hack/lib/local-cluster/ns-init" worker "$1" -- \
        slurmd -f /etc/slurm/slurm.conf 8>&-
    wait_until 60 bash -c "'$LC' run -- sinfo -h -n $1 -o %t | grep -qx idle"
}

# jail_dir NAME: /srv/NAME, made in the jail (mode 1777): a directory of the
# shared root that every job on every node sees and every user can write
# (a job's /tmp and /var/tmp are its own). Prints its path in the jail.
jail_dir() {
    install -d -m 1777 "$JAIL/srv/$1"
    echo "/srv/$1"
}

# ctld_exec CMD...: an admin command (root) on the controller host.
ctld_exec() { nsenter -t "$(pid_in "$STATE/ctld/slurmctld.pid")" -m -u -n -- "$@"; }

# job_running JOB: the job is RUNNING.
job_running() { ush "squeue -h -j $1 -o %T" | grep -qx RUNNING; }
