#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The NCCL check where it really runs: a job inside the jail. A REAL munged +
# slurmctld + slurmd with chroot.so (the README's plugstack line, with this
# cluster's paths), a jail from hack/jail-rootfs holding what the jail image
# holds (slurm-jail-nccl-check in /usr/sbin, libfmt9) plus a fake
# all_reduce_perf where images/nccl-tests installs the real one. A hostile
# user acts through their own jobs in the same jail.

bats_require_minimum_version 1.5.0

load helpers
load cluster

TEST_ROOT=/var/lib/slurm-jail-health-test
USER_NAME=sjhealth
USER_UID=5301
ARP=/usr/lib/slurm-jail/nccl-tests/bin/all_reduce_perf
JAIL_FIXTURES=/usr/share/sjh-fixtures

# The jail needs what the jail image has for the check, nothing from the host.
make_jail() {
    local jail=$1 tarball
    tarball=$("$SLURM_JAIL_ROOT/hack/jail-rootfs" --include libfmt9) || return 1
    install -d -m 0755 "$jail"
    tar -C "$jail" -xf "$tarball"
    install -m 0755 "$HEALTH_BIN/slurm-jail-nccl-check" "$jail/usr/sbin/"
    install -d -m 0755 "$(dirname "$jail$ARP")" "$jail$JAIL_FIXTURES"
    install -m 0755 "$FAKE_NCCL" "$jail$ARP"
    install -m 0644 "$FIXTURES"/nccl/0*.txt "$jail$JAIL_FIXTURES/"
    getent passwd "$USER_NAME" | sed 's/:x:/:*:/' >>"$jail/etc/passwd"
    getent group "$USER_NAME" >>"$jail/etc/group"
    install -d -o "$USER_UID" -g "$USER_UID" -m 0755 "$jail/home/$USER_NAME"
}

setup_file() {
    local d=$TEST_ROOT/cluster
    rm -rf "$TEST_ROOT"
    install -d -m 0755 "$TEST_ROOT" "$d" "$d/lib"
    # The hostile user, made here when missing and removed at the end.
    if ! getent passwd "$USER_NAME" >/dev/null; then
        useradd -u "$USER_UID" -U -M -d "/home/$USER_NAME" -s /bin/sh "$USER_NAME"
        touch "$TEST_ROOT/made-user"
    fi
    install -m 0644 "$SLURM_JAIL_BUILD_DIR/plugin/chroot/chroot.so" "$d/lib/chroot.so"
    install -d -m 1777 "$d/nodetmp"
    make_jail "$d/jail"
    # chroot.so's mount points for this cluster's munge, config and spool
    install -d -m 0755 "$d/jail$d/munge" "$d/jail$d/etc" "$d/jail$d/spool/n1"
    export SJH_PRIVATE_NS=1 SJH_JAIL_NS_FILE=$d/run/ns
    export SJH_PLUGSTACK="required $d/lib/chroot.so jail=$d/jail munge=$d/munge conf_dir=$d/etc spool=$d/spool/n1 tmp=$d/nodetmp state=$d/run"
    cluster_start "$d"
}

teardown_file() {
    cluster_stop
    if [ -f "$TEST_ROOT/made-user" ]; then
        pkill -KILL -U "$USER_UID" 2>/dev/null || true
        userdel "$USER_NAME" || echo "could not remove the test user $USER_NAME" >&2
        if getent group "$USER_NAME" >/dev/null; then groupdel "$USER_NAME"; fi
    fi
    rm -rf "$TEST_ROOT"
}

setup() {
    JAIL=$SJH_CLUSTER/jail
    scontrol update nodename=n1 state=resume 2>/dev/null || true
    wait_state n1 idle
}

# until no job is left (max 60 s)
wait_jobs() {
    for _ in $(seq 1 300); do
        [ -z "$(squeue -h)" ] && return 0
        sleep 0.2
    done
    echo "jobs still queued: $(squeue)" >&2
    return 1
}

# A job of the hostile user, in the jail (waits for it).
as_user_job() {
    runuser -u "$USER_NAME" -- sbatch --wait --chdir="/home/$USER_NAME" \
        --output="/home/$USER_NAME/job-%j.out" --wrap "$1"
}

# A root job running the check in the jail (waits for it; exits as the check).
# Extra environment for the job comes before: env VAR=... root_check_job ARGS
root_check_job() {
    sbatch --wait --nodelist=n1 --chdir=/ --output="/root/check-%j.out" \
        --wrap "exec /usr/sbin/slurm-jail-nccl-check --gpu-model A100 --gpus 4 $*"
}

last_check_output() { cat "$(ls -t "$JAIL"/root/check-*.out | head -1)"; }

@test "nccl-submit's job runs the check inside the jail, from the jail's files, and drains the node" {
    run nccl_submit --check-command /usr/sbin/slurm-jail-nccl-check \
        --sbatch-arg=--chdir=/ --sbatch-arg=--output=/root/submitted-%j.out -- \
        --gpu-model A100 --gpus 4 \
        --env "FAKE_NCCL_FIXTURE=$JAIL_FIXTURES/05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt" \
        --env FAKE_NCCL_ARGS=/root/sjh-arp-args
    assert_success
    assert_line --regexp '^n1: Submitted batch job [0-9]+$'
    wait_jobs
    run cat "$JAIL"/root/submitted-*.out
    assert_line 'FAIL n1: busbw 5.20 GB/s at 8 GiB < 200 GB/s expected for A100x4'
    assert_line --partial 'n1: check failed; draining: slurm-jail-health: nccl:'
    run node_info n1
    assert_output 'drained|slurm-jail-health: nccl: busbw 5.20 GB/s at 8 GiB < 200 GB/s expected for A100x4'
    # The jail's default all_reduce_perf ran, in the jail: its arguments file
    # is in the jail's /root, not in the host's.
    run cat "$JAIL/root/sjh-arp-args"
    assert_output '-b 8G -e 8G -f 2 -g 4'
    [ ! -e /root/sjh-arp-args ]
    # One failure counter per node, in the jail's root-owned state directory.
    run jq -c . "$JAIL/var/lib/slurm-jail/health/nccl-check.n1.failures"
    assert_output '{"check":"nccl","consecutive_failures":1}'
    run stat -c '%U %a' "$JAIL/var/lib/slurm-jail/health"
    assert_output 'root 755'
}

@test "the submitter's [nccl-check] settings reach the check in the jail; a pass resumes the node" {
    local conf=$BATS_TEST_TMPDIR/health.conf
    cat >"$conf" <<CONF
[nccl-check]
threshold = A100x4=230
gpu-model = NVIDIA A100-SXM4-80GB
gpus = 4
env = FAKE_NCCL_FIXTURE=$JAIL_FIXTURES/04_healthy_4gpu_nvswitch_a100.txt
env = FAKE_NCCL_DELAY=3
[nccl-submit]
check-command = /usr/sbin/slurm-jail-nccl-check
sbatch-arg = --chdir=/
CONF
    run "$HEALTH_BIN/slurm-jail-nccl-submit" --config "$conf" --sbatch-arg=--output=/root/pass-%j.out
    assert_success
    # While it runs, an earlier NCCL run's drain lands on the node (DRAINING).
    for _ in $(seq 1 100); do
        [ -n "$(squeue -h -t running)" ] && break
        sleep 0.1
    done
    scontrol update nodename=n1 state=drain reason="slurm-jail-health: nccl: an earlier run"
    wait_jobs
    run cat "$JAIL"/root/pass-*.out
    assert_line 'PASS n1: NCCL all_reduce check passed'
    assert_line '  busbw 234.74 GB/s at 8 GiB >= 230 GB/s expected for A100x4'
    assert_line --partial "n1: check passed; resuming (drained by us: 'slurm-jail-health: nccl: an earlier run')"
    wait_state n1 'idle\*?'
}

@test "a user's programs in the shared jail never run as root: not as --binary, not first in PATH" {
    # The user plants an all_reduce_perf and a scontrol in their home, from
    # their own job in the jail; each would leave a mark saying who ran it.
    local plant='mkdir -p bin && for t in all_reduce_perf scontrol; do
        printf "#!/bin/sh\nid -u >/home/sjhealth/ran-%s\nexit 0\n" "$t" >bin/$t; chmod 755 bin/$t; done'
    run as_user_job "$plant"
    assert_success
    run stat -c '%u %a' "$JAIL/home/$USER_NAME/bin/scontrol"
    assert_output "$USER_UID 755"

    # An admin pointing --binary at it: refused before anything runs.
    run root_check_job --binary "/home/$USER_NAME/bin/all_reduce_perf" \
        --env "FAKE_NCCL_FIXTURE=$JAIL_FIXTURES/05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt"
    assert_failure 2
    run last_check_output
    assert_output "slurm-jail-nccl-check: error: refusing '/home/$USER_NAME/bin/all_reduce_perf': '/home/$USER_NAME' is owned by uid $USER_UID; what a check uses as root must be owned by root, like every directory above it, and not writable by group or others"
    run node_info n1
    assert_output 'idle|none'

    # The user's directory first in the job's PATH, their lib directory in
    # LD_LIBRARY_PATH: the check drains through the jail's own scontrol, and
    # all_reduce_perf gets a clean environment.
    PATH="/home/$USER_NAME/bin:$PATH" LD_LIBRARY_PATH="/home/$USER_NAME/lib" \
        run root_check_job --env FAKE_NCCL_ENV=/root/sjh-arp-env \
        --env "FAKE_NCCL_FIXTURE=$JAIL_FIXTURES/05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt"
    assert_failure 1
    run node_info n1
    assert_output 'drained|slurm-jail-health: nccl: busbw 5.20 GB/s at 8 GiB < 200 GB/s expected for A100x4'
    run grep -E '^(PATH|LD_LIBRARY_PATH)=' "$JAIL/root/sjh-arp-env"
    assert_output 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

    # Nothing of the user's ran, as anyone.
    run ls "$JAIL/home/$USER_NAME"
    refute_output --partial 'ran-'
}

@test "a state directory the user owns in the jail is refused before the benchmark runs" {
    # /srv/sjh-shared: a directory of the jail every user may write (a
    # job's /tmp and /var/tmp are its own)
    install -d -m 1777 "$JAIL/srv/sjh-shared"
    run as_user_job 'mkdir -p /srv/sjh-shared/sjh-state'
    assert_success
    run root_check_job --state-dir /srv/sjh-shared/sjh-state --env FAKE_NCCL_ARGS=/root/sjh-never \
        --env "FAKE_NCCL_FIXTURE=$JAIL_FIXTURES/05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt"
    assert_failure 2
    run last_check_output
    assert_output "slurm-jail-nccl-check: error: refusing '/srv/sjh-shared/sjh-state': '/srv/sjh-shared/sjh-state' is owned by uid $USER_UID; what a check uses as root must be owned by root, like every directory above it, and not writable by group or others"
    [ ! -e "$JAIL/root/sjh-never" ]
    run ls -A "$JAIL/srv/sjh-shared/sjh-state"
    assert_output ''
    rm -rf "$JAIL/srv/sjh-shared"
    run node_info n1
    assert_output 'idle|none'
}
