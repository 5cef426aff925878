#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# GPU nodes without GPUs (local-cluster up --fake-gpu): each node has its own
# fake NVIDIA driver, of a different version, at /usr/local/nvidia in its
# mount namespace only; the jail has no NVIDIA file. Jobs find their node's
# driver by name (dlopen, a normally linked CUDA program, nvidia-smi on the
# PATH), an upgrade on one node reaches that node's next job only, a missing
# driver with gpu=on fails closed, the NCCL check runs as a job in the jail
# with the node's driver, and the jail's files never change.

bats_require_minimum_version 1.5.0

load helpers

FAKES=$SLURM_JAIL_BUILD_DIR/tests/fakes/nvidia-driver
PROBES=$HOME_IN_JAIL/gpu-probes
NV_LIB=/usr/local/nvidia/lib64

setup_file() {
    use_cluster --fake-gpu
    install -d -m 0755 -o "$TEST_UID" -g "$TEST_UID" "$HOST_HOME/gpu-probes"
    install -m 0755 -o "$TEST_UID" "$FAKES/probes/fake_nvidia_dlopen_probe" \
        "$FAKES/probes/fake_nvidia_cuda_probe" "$HOST_HOME/gpu-probes/"
    jail_tree >"$BATS_FILE_TMPDIR/jail-before"
}

teardown_file() {
    rm -rf "$HOST_HOME/gpu-probes" "$JAIL/var/lib/slurm-jail/health" "$JAIL"/root/nccl-*.out
}

setup() {
    load_assertions
}

teardown() {
    set_plugstack "$PLUGSTACK_LINE"
    rm -rf "$STATE/nodes/node2/run/mps-shm" "$STATE/nodes/node2/run/mps-pipe"
    "$LC" fake-driver node1 550.54.15 >&2
    "$LC" fake-driver node2 570.124.06 >&2
}

# Every file of the jail but users' homes: type, mode, owner, size, inode,
# mtime, ctime and link target, then every file's content.
jail_tree() {
    (
        cd "$JAIL" || exit 1
        find . -xdev -path ./home -prune -o -printf '%p %y %m %U:%G %s %i %T@ %C@ %l\n' | sort
        find . -xdev -path ./home -prune -o -type f -print0 | sort -z | xargs -0 sha256sum
    )
}

# on NODE CMD: run CMD as a job step on NODE (as the test user, in the jail);
# --quiet: no "queued and waiting" notice while a node finishes a job.
on() { ush "srun --quiet -w $1 $2"; }

# assert_driver NODE VERSION CUDA: what jobs on NODE see of its driver.
assert_driver() {
    run on "$1" "$PROBES/fake_nvidia_dlopen_probe"
    assert_success
    assert_line "libcuda.so.1=$NV_LIB/libcuda.so.1 cuda=$3"
    assert_line "libnvidia-ml.so.1=$NV_LIB/libnvidia-ml.so.1 driver=$2"
    run on "$1" "$PROBES/fake_nvidia_cuda_probe"
    assert_success
    assert_output "cuInit=0 cuDriverGetVersion=0 version=$3 libcuda=$NV_LIB/libcuda.so.1"
    run on "$1" nvidia-smi
    assert_success
    assert_line "Driver Version: $2"
    assert_line "NVML: $NV_LIB/libnvidia-ml.so.1"
}

@test "precondition: the jail has no NVIDIA file, each node has its own driver" {
    run find "$JAIL" -xdev \( -name 'libcuda*' -o -name 'libnvidia*' -o -name 'nvidia-smi' \) -not -type l
    assert_output ''
    [ -z "$(ls -A "$JAIL/usr/local/nvidia")" ]
    assert_equal "$(readlink "$JAIL/usr/local/bin/nvidia-smi")" /usr/local/nvidia/bin/nvidia-smi
    [ -f "$STATE/nodes/node1/nvidia/lib64/libcuda.so.550.54.15" ]
    [ -f "$STATE/nodes/node2/nvidia/lib64/libcuda.so.570.124.06" ]
    # The node's driver root is in its mount namespace only, not on the host.
    [ ! -e /usr/local/nvidia/lib64 ]
    run "$LC" status
    assert_line --regexp '^node1 +[0-9]+ \(fake NVIDIA driver 550\.54\.15\)$'
    assert_line --regexp '^node2 +[0-9]+ \(fake NVIDIA driver 570\.124\.06\)$'
}

@test "jobs on each node load libcuda and NVML by name and get their node's version" {
    assert_driver node1 550.54.15 12040
    assert_driver node2 570.124.06 12080
    # Found by the loader alone: the job has no LD_LIBRARY_PATH.
    run on node1 "sh -c 'echo LD_LIBRARY_PATH=\${LD_LIBRARY_PATH-unset}; command -v nvidia-smi'"
    assert_line LD_LIBRARY_PATH=unset
    assert_line /usr/local/bin/nvidia-smi
}

@test "one step on both nodes: each task sees its own node's driver" {
    run ush "srun -N2 --ntasks-per-node=1 -l nvidia-smi"
    assert_success
    assert_line --regexp '^[01]: Driver Version: 550\.54\.15$'
    assert_line --regexp '^[01]: Driver Version: 570\.124\.06$'
}

@test "a batch job and srun inside it see the node's driver" {
    local out=$HOME_IN_JAIL/gpu-batch.out
    run ush "sbatch --wait -w node2 -o $out --wrap 'nvidia-smi; srun $PROBES/fake_nvidia_dlopen_probe'"
    assert_success
    run cat "$JAIL$out"
    assert_line "Driver Version: 570.124.06"
    assert_line "libnvidia-ml.so.1=$NV_LIB/libnvidia-ml.so.1 driver=570.124.06"
    rm -f "$JAIL$out"
}

@test "the driver tree and the loader cache are read-only for jobs" {
    local f
    for f in $NV_LIB/x $NV_LIB/libcuda.so.1 /etc/ld.so.cache /usr/local/nvidia/x; do
        run on node1 "touch $f"
        assert_failure
        assert_output --regexp "cannot touch '$f': (Read-only file system|Permission denied)"
    done
}

@test "each node records what it bound, node-locally" {
    local n report
    for n in node1 node2; do
        report=$STATE/nodes/$n/run/gpu
        run cat "$report"
        assert_success
        assert_line --regexp "^gpu=auto: NVIDIA driver [0-9.]+ found under /usr/local/nvidia, bound at /usr/local/nvidia$"
        assert_line --regexp "^$NV_LIB/libcuda\.so\.[0-9.]+ <- /usr/local/nvidia/lib64/libcuda\.so\.[0-9.]+ \(links: libcuda\.so libcuda\.so\.1\)$"
        assert_line "/usr/local/nvidia/bin/nvidia-smi <- /usr/local/nvidia/bin/nvidia-smi"
        assert_line --regexp '^/etc/ld\.so\.cache <- /run/slurm-jail/ld\.so\.cache \(ldconfig over the view, [0-9.]+ ms\)$'
        sed "s/^/# $n: /" "$report" >&3
    done
}

@test "a driver upgrade on node1 reaches node1's next job; node2 keeps its driver and namespace" {
    local stamp2
    assert_driver node1 550.54.15 12040
    assert_driver node2 570.124.06 12080
    stamp2=$(cat "$STATE/nodes/node2/run/stamp")
    run "$LC" fake-driver node1 580.159.04
    assert_success
    assert_driver node1 580.159.04 13000
    assert_driver node2 570.124.06 12080
    assert_equal "$(cat "$STATE/nodes/node2/run/stamp")" "$stamp2"
}

@test "no driver on a node: gpu=auto runs jobs without one; gpu=on fails closed with one line" {
    local canary=gpu-canary-$$
    "$LC" fake-driver node2 none
    run on node2 "$PROBES/fake_nvidia_dlopen_probe"
    assert_failure
    assert_output --partial "libcuda.so.1: cannot open shared object file"
    run on node2 nvidia-smi
    assert_failure
    set_plugstack "$PLUGSTACK_LINE gpu=on"
    run ush "srun -w node2 sh -c 'touch $HOME_IN_JAIL/$canary; echo TASK-RAN'"
    assert_failure
    refute_output --partial TASK-RAN
    [ ! -e "$HOST_HOME/$canary" ]
    assert_line --regexp '^slurmstepd(-node2)?: error: chroot: StepId=[0-9]+\.0: task not started, jail entry failed: no NVIDIA driver found on this node \(gpu=on\); looked for libcuda\.so\.1 and libnvidia-ml\.so\.1 in: /: .*; /usr/local/nvidia: no etc/ld\.so\.cache, lib64/ or lib/; install the driver, or name the root it is mounted at$' 
    # node1 still has its driver: gpu=on is met there.
    assert_driver node1 550.54.15 12040
    # A driver root named with gpu_driver_root= must have it.
    set_plugstack "$PLUGSTACK_LINE gpu=on gpu_driver_root=/run/nvidia/driver"
    run on node1 "echo TASK-RAN"
    assert_failure
    refute_output --partial TASK-RAN
    assert_output --partial "in: /run/nvidia/driver: does not exist"
}

# gpu_mps_shm=DIR: the MPS daemon's own /dev/shm, where the server and its
# clients share memory by name. node2 has one (a file of the "server" in
# it), node1 none. The directory is below chroot.so's state directory, the
# one node-local place of the local cluster's nodes (they share the host's /run).
@test "gpu_mps_shm=DIR: jobs on a node with the MPS daemon's /dev/shm share it; other nodes' jobs keep their own" {
    local shm=/run/slurm-jail/mps-shm host_shm=$STATE/nodes/node2/run/mps-shm
    install -d -m 1777 "$host_shm"
    echo "from the MPS server" >"$host_shm/cuda.shm.server"
    set_plugstack "$PLUGSTACK_LINE gpu_mps_shm=$shm"
    # While the job runs (its end removes what the user left in DIR): it
    # reads the server's file and its own lands in the node's DIR, the user's.
    rm -f "$HOST_HOME/e2e-mps-read"
    run ush "sbatch --parsable -w node2 -o /dev/null --wrap 'cat /dev/shm/cuda.shm.server >\$HOME/e2e-mps-read &&
        echo from-a-client >/dev/shm/.client && mv /dev/shm/.client /dev/shm/cuda.shm.client && sleep 120'"
    assert_success
    local job=$output
    wait_until 30 test -f "$host_shm/cuda.shm.client"
    assert_equal "$(cat "$HOST_HOME/e2e-mps-read")" "from the MPS server"
    assert_equal "$(cat "$host_shm/cuda.shm.client")" from-a-client
    assert_equal "$(stat -c %u "$host_shm/cuda.shm.client")" "$TEST_UID"
    ush "scancel $job"
    wait_until 30 no_jobs
    rm -f "$HOST_HOME/e2e-mps-read"
    # A later job on node2 meets the same directory, without what the
    # user's ended job left there; node1's jobs have their own.
    run on node2 "ls /dev/shm"
    assert_output cuda.shm.server
    run on node1 "sh -c 'ls -A /dev/shm; stat -f -c %T /dev/shm'"
    assert_success
    assert_output tmpfs
}

# A directory a user could have planted or can write: the job fails before
# any task runs, with the fix; once DIR is gone, jobs have their own /dev/shm.
@test "gpu_mps_shm=DIR that is a symlink or a user's directory: the job fails and names the fix" {
    local shm=/run/slurm-jail/mps-shm host_shm=$STATE/nodes/node2/run/mps-shm
    set_plugstack "$PLUGSTACK_LINE gpu_mps_shm=$shm"
    ln -sfn /etc "$host_shm"
    run on node2 "sh -c 'ls /dev/shm; echo TASK-RAN'"
    assert_failure
    refute_output --partial TASK-RAN
    assert_output --partial "gpu_mps_shm=$shm"
    assert_output --partial "or unset gpu_mps_shm="
    rm -f "$host_shm"
    install -d -m 0755 -o "$TEST_UID" "$host_shm"
    run on node2 "sh -c 'ls /dev/shm; echo TASK-RAN'"
    assert_failure
    refute_output --partial TASK-RAN
    assert_output --partial "owned by uid $TEST_UID, not root"
    assert_output --partial "or unset gpu_mps_shm="
    rm -rf "$host_shm"
    run on node2 "sh -c 'ls -A /dev/shm; stat -f -c %T /dev/shm'"
    assert_success
    assert_output tmpfs
}

# slurm-jail-check where node2's MPS daemon runs (its pipe directory holds
# `control`): a warning until jobs get its /dev/shm and while that is not a
# tmpfs with a size of its own, a problem when it cannot be trusted.
@test "slurm-jail-check on a node with an MPS daemon: a warning without gpu_mps_shm= or when it is no tmpfs, a problem when it is a symlink" {
    local check=$CLUSTER_BUILD/plugin/jail_check/slurm-jail-check
    local node_run=$STATE/nodes/node2/run line="$PLUGSTACK_LINE gpu_mps_dir=/run/slurm-jail/mps-pipe"
    install -d -m 0755 "$node_run/mps-pipe"
    mkfifo "$node_run/mps-pipe/control"
    set_plugstack "$line"
    run on_node node2 "$check"
    assert_line --partial "WARNING: a node-wide MPS daemon runs (/run/slurm-jail/mps-pipe/control), but gpu_mps_shm= is not set"
    install -d -m 1777 "$node_run/mps-shm"
    set_plugstack "$line gpu_mps_shm=/run/slurm-jail/mps-shm"
    # No job's limit applies there: a directory that is not a tmpfs of its
    # own size is a warning, with how to make one.
    run on_node node2 "$check"
    assert_line --regexp "^WARNING: gpu_mps_shm=/run/slurm-jail/mps-shm is not a tmpfs: .* -- fix: .*mount -t tmpfs -o size="
    on_node node2 mount -t tmpfs -o size=1m,mode=1777 tmpfs /run/slurm-jail/mps-shm
    run on_node node2 "$check"
    on_node node2 umount /run/slurm-jail/mps-shm
    refute_output --partial "MPS"
    refute_output --partial "gpu_mps_shm"
    rm -rf "$node_run/mps-shm"
    ln -s /etc "$node_run/mps-shm"
    run on_node node2 "$check"
    rm -rf "$node_run/mps-pipe"
    assert_failure
    assert_line --regexp '^PROBLEM: gpu_mps_shm=/run/slurm-jail/mps-shm: .*every job on this node fails'
}

@test "the jail's files are byte for byte what they were before the GPU jobs" {
    jail_tree >"$BATS_FILE_TMPDIR/jail-after"
    run diff "$BATS_FILE_TMPDIR/jail-before" "$BATS_FILE_TMPDIR/jail-after"
    assert_success
    assert_output ''
    [ "$(wc -l <"$BATS_FILE_TMPDIR/jail-before")" -gt 1000 ]
}

# What the CronJob does: slurm-jail-nccl-submit, as root on a host with the
# Slurm client, chroot.so and munge (here node1's own view of the node),
# submits one job per node, which runs the jail's slurm-jail-nccl-check and
# all_reduce_perf as root in the jail. The stand-in all_reduce_perf finds
# the driver by name as the real one does, and fails without it.
nccl_submit() {
    nsenter -t "$(slurmd_pid node1)" -m -u -n -- "$SLURM_JAIL_BUILD_DIR/health/slurm-jail-nccl-submit" --config /dev/null \
        --sbatch-arg=--chdir=/ --sbatch-arg=--output=/root/nccl-%N-%j.out -- \
        --gpu-model H200 --gpus 1
}

no_jobs() { [ -z "$(ctld_exec squeue -h)" ]; }
node_is() { [ "$(ctld_exec sinfo -h -n "$1" -o %T)" = "$2" ]; }


@test "the NCCL check runs as a job in the jail on every node, with the node's driver" {
    run nccl_submit
    assert_success
    assert_line --regexp '^node1: Submitted batch job [0-9]+$'
    assert_line --regexp '^node2: Submitted batch job [0-9]+$'
    wait_until 60 no_jobs
    run cat "$JAIL"/root/nccl-node1-*.out "$JAIL"/root/nccl-node2-*.out
    assert_line 'PASS node1: NCCL all_reduce check passed'
    assert_line 'PASS node2: NCCL all_reduce check passed'
    rm -f "$JAIL"/root/nccl-*.out
    # Without its driver, node2 fails the check and is drained for it.
    "$LC" fake-driver node2 none
    run nccl_submit
    assert_success
    wait_until 60 no_jobs
    run cat "$JAIL"/root/nccl-node2-*.out
    assert_line --partial "FAIL node2: all_reduce_perf exited with code 2 (CUDA error)"
    run ctld_exec sinfo -h -n node2 -o '%T|%E'
    assert_output --regexp '^drained\|slurm-jail-health: nccl: all_reduce_perf exited with code 2'
    run cat "$JAIL"/root/nccl-node1-*.out
    assert_line 'PASS node1: NCCL all_reduce check passed'
    # The admin reinstalls the driver and resumes the node; the check passes.
    "$LC" fake-driver node2 570.124.06
    ctld_exec scontrol update nodename=node2 state=resume
    wait_until 20 node_is node2 idle
    rm -f "$JAIL"/root/nccl-*.out
    run nccl_submit
    assert_success
    wait_until 60 no_jobs
    run cat "$JAIL"/root/nccl-node2-*.out
    assert_line 'PASS node2: NCCL all_reduce check passed'
}
