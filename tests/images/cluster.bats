#!/usr/bin/env bats
# shellcheck disable=SC2154 # $images, $populate, ... come from helpers.bash
# A whole cluster from the images, in one podman pod (its own network
# namespace, loopback only): controller, two workers and a login node sharing
# the jail volume. Users reach it with ssh from the pod's network namespace.

load helpers

ssh_port=2222

setup_file() {
    "$images/build-images" >&3
    export POD=sjtest-cluster-$$ VOL=sjtest-jail-$$ CFG=$BATS_FILE_TMPDIR
    make_cluster_config "$CFG"
    podman volume create "$VOL" >/dev/null
    podman run --rm --network none -v "$VOL:/mnt/jail" localhost/slurm-jail/populate-jail:latest
    start_pod
    start_controller
    start_worker w1
    start_worker w2
    start_login
    wait_for_nodes 2
    wait_for_sshd
}

# On a failed test, the containers' last log lines go with its output.
teardown() {
    [ -z "${BATS_TEST_COMPLETED:-}" ] || return 0
    local c
    for c in ctl w1 w2 login; do
        echo "--- podman logs $POD-$c (last 20 lines)"
        podman logs "$POD-$c" 2>&1 | tail -20
    done
}

teardown_file() {
    if [ -n "${POD:-}" ]; then
        podman pod stop -t 10 "$POD" >/dev/null 2>&1 || true
        podman pod rm -f "$POD" >/dev/null 2>&1 || podman pod rm -f "$POD" >/dev/null 2>&1 || true
    fi
    [ -z "${VOL:-}" ] || podman volume rm -f "$VOL" >/dev/null 2>&1 || true
}

# The pod's network namespace has loopback plus a veth pair with a TEST-NET
# address: Slurm resolves even "127.0.0.1" with AI_ADDRCONFIG, which fails
# when no non-loopback address exists. Nothing leaves the namespace.
start_pod() {
    podman pod create --name "$POD" --hostname sjpod --add-host sjpod:127.0.0.1 --network none >/dev/null
    podman pod start "$POD" >/dev/null
    export NETNS
    NETNS=/proc/$(podman inspect --format '{{.State.Pid}}' "$(podman pod inspect --format '{{.InfraContainerID}}' "$POD")")/ns/net
    nsenter --net="$NETNS" sh -euc '
        ip link add sj0 type veth peer name sj1
        ip addr add 192.0.2.1/24 dev sj0
        ip link set sj0 up
        ip link set sj1 up'
}

make_cluster_config() {
    local dir=$1
    mkdir -p "$dir/slurm" "$dir/munge" "$dir/host-keys" "$dir/authorized-keys" "$dir/client"
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chmod 0400 "$dir/munge/munge.key"
    ssh-keygen -q -t ed25519 -N '' -C sjtest-host -f "$dir/host-keys/ssh_host_ed25519_key"
    ssh-keygen -q -t ed25519 -N '' -C testuser -f "$dir/client/testuser"
    ssh-keygen -q -t ed25519 -N '' -C mallory -f "$dir/client/mallory"
    cp "$dir/client/testuser.pub" "$dir/authorized-keys/testuser"
    cp "$dir/client/mallory.pub" "$dir/authorized-keys/mallory" # not in the jail
    chmod 0755 "$dir/authorized-keys"
    chmod 0644 "$dir/authorized-keys"/*
    echo "[127.0.0.1]:$ssh_port $(cut -d' ' -f1,2 "$dir/host-keys/ssh_host_ed25519_key.pub")" \
        >"$dir/client/known_hosts"
    cat >"$dir/slurm/slurm.conf" <<EOF
ClusterName=sjtest
SlurmctldHost=sjpod(127.0.0.1)
SlurmctldPort=6817
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
PlugStackConfig=/etc/slurm/plugstack.conf
NodeName=w1 NodeHostname=sjpod NodeAddr=127.0.0.1 Port=6818
NodeName=w2 NodeHostname=sjpod NodeAddr=127.0.0.1 Port=6819
PartitionName=main Nodes=w1,w2 Default=YES MaxTime=INFINITE State=UP
EOF
    echo 'required chroot.so jail=/mnt/jail' >"$dir/slurm/plugstack.conf"
}

common_mounts() {
    printf -- '%s\n' -v "$CFG/slurm:/etc/slurm:ro" -v "$CFG/munge:/etc/munge-secret:ro"
}

start_controller() {
    local -a m
    mapfile -t m < <(common_mounts)
    podman run -d --pod "$POD" --name "$POD-ctl" "${m[@]}" -v "$VOL:/mnt/jail:ro" \
        localhost/slurm-jail/worker:latest slurmctld >/dev/null
}

start_worker() {
    local -a m
    mapfile -t m < <(common_mounts)
    podman run -d --pod "$POD" --name "$POD-$1" "${m[@]}" -v "$VOL:/mnt/jail" \
        --cap-add SYS_ADMIN,SYS_CHROOT --security-opt unmask=ALL \
        -e SLURM_NODENAME="$1" localhost/slurm-jail/worker:latest >/dev/null
}

start_login() {
    local -a m
    mapfile -t m < <(common_mounts)
    podman run -d --pod "$POD" --name "$POD-login" "${m[@]}" -v "$VOL:/mnt/jail" \
        -v "$CFG/host-keys:/etc/ssh/host-keys:ro" -v "$CFG/authorized-keys:/etc/ssh/authorized-keys:ro" \
        --cap-add SYS_ADMIN,SYS_CHROOT -e SSHD_PORT="$ssh_port" \
        localhost/slurm-jail/login:latest >/dev/null
}

wait_for_nodes() {
    local idle=0
    for _ in $(seq 1 90); do
        idle=$(podman exec "$POD-ctl" sinfo -h -N -o '%N %T' 2>/dev/null | grep -c ' idle$' || true)
        [ "$idle" -lt "$1" ] || return 0
        sleep 1
    done
    podman exec "$POD-ctl" sinfo -N >&2 || true
    echo "only $idle of $1 nodes became idle" >&2
    return 1
}

wait_for_sshd() {

    for _ in $(seq 1 60); do
        nsenter --net="$NETNS" bash -c "</dev/tcp/127.0.0.1/$ssh_port" 2>/dev/null && return 0
        sleep 1
    done
    echo "sshd did not listen on $ssh_port" >&2
    return 1
}

# pod_ssh USER [SSH OPTIONS...] -- COMMAND: ssh from the pod's network namespace
pod_ssh() {
    local user=$1
    shift
    local -a opts=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    timeout 120 nsenter --net="$NETNS" ssh -F /dev/null -p "$ssh_port" \
        -o UserKnownHostsFile="$CFG/client/known_hosts" -o StrictHostKeyChecking=yes \
        -o BatchMode=yes -o ConnectTimeout=20 "${opts[@]}" "$user@127.0.0.1" "$@"
}

@test "cluster: ssh as testuser lands in the jail, with the mounted host key" {
    run pod_ssh testuser -i "$CFG/client/testuser" -- \
        'id -un; pwd; cat /etc/slurm-jail-release; test -e /usr/sbin/sshd && echo has-sshd || echo no-sshd; ls -a /'
    assert_success
    assert_line --index 0 testuser
    assert_line --index 1 /home/testuser
    assert_line --index 2 SLURM_JAIL_VERSION=0.1.0
    # the login container has sshd, the jail does not: the session is chrooted
    assert_line --index 3 no-sshd
    assert_output --partial '.slurm-jail'
}

@test "cluster: sbatch in the SSH session runs on a worker inside the jail; output read back over SSH" {
    local start
    start=$(date +%s.%N)
    run pod_ssh testuser -i "$CFG/client/testuser" -- \
        "sinfo -h -N -o '%N %T' && squeue -h && sbatch --parsable --wait -o 'job-%j.out' --wrap '
            echo node=\$SLURMD_NODENAME; id -un; cat /etc/slurm-jail-release; pwd
            test -x /usr/bin/slurmd && echo worker-root || echo jail-root
            echo written-by-job > from-job.txt'"
    assert_success
    assert_line 'w1 idle'
    assert_line 'w2 idle'
    local job=${lines[-1]}
    [[ $job =~ ^[0-9]+$ ]]
    note "sbatch --wait round trip over ssh: $(seconds_since "$start") s"

    run pod_ssh testuser -i "$CFG/client/testuser" -- "cat job-$job.out; cat from-job.txt"
    assert_success
    assert_line --regexp '^node=w[12]$'
    assert_line testuser
    assert_line SLURM_JAIL_VERSION=0.1.0
    assert_line /home/testuser
    assert_line jail-root # the worker's own root has slurmd; the jail has none
    assert_line written-by-job
}

@test "cluster: srun from the SSH session runs on both workers inside the jail" {
    run pod_ssh testuser -i "$CFG/client/testuser" -- \
        "srun -N2 -l bash -c 'echo \$SLURMD_NODENAME \$(cat /etc/slurm-jail-release)' | sort"
    assert_success
    assert_line '0: w1 SLURM_JAIL_VERSION=0.1.0'
    assert_line '1: w2 SLURM_JAIL_VERSION=0.1.0'
}

@test "cluster: a user missing from the jail's passwd is refused, even with an authorized key" {
    run pod_ssh mallory -i "$CFG/client/mallory" -- true
    assert_failure 255
    assert_output --partial 'Permission denied'
    run podman logs "$POD-login"
    assert_output --partial 'Invalid user mallory'
}

@test "cluster: password logins are refused; only public keys are offered" {
    run pod_ssh testuser -o PubkeyAuthentication=no \
        -o PreferredAuthentications=password,keyboard-interactive -- true
    assert_failure 255
    assert_output --partial 'Permission denied (publickey)'
    # root logs in only with its own authorized key, never with another user's.
    run pod_ssh root -i "$CFG/client/testuser" -- true
    assert_failure 255
}

@test "cluster: the login node keeps its mounted host key across a restart" {
    podman restart -t 10 "$POD-login" >/dev/null
    wait_for_sshd
    # StrictHostKeyChecking=yes against the key generated for the mount
    run pod_ssh testuser -i "$CFG/client/testuser" -- 'cat /etc/slurm-jail-release'
    assert_success
    assert_output SLURM_JAIL_VERSION=0.1.0
}

@test "cluster: a worker stops cleanly on SIGTERM" {
    local start
    start=$(date +%s.%N)
    podman stop -t 30 "$POD-w2" >/dev/null
    note "worker stop: $(seconds_since "$start") s"
    assert_equal "$(podman inspect --format '{{.State.ExitCode}}' "$POD-w2")" 0
    run podman logs "$POD-w2"
    assert_output --partial 'stopping slurmd'
    assert_output --partial 'slurmd exited with status 0'
}
