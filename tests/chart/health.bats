#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2154 # variables come from helpers.bash
# The chart's GPU wiring in a running release (kube-run on podman): a
# nodeset marked as GPU, whose GPUs are the health tests' fake NVML library
# (values of a real H100) and empty device files, and whose node driver is a
# fake one in a driver root on the host (gpuDriverRoot); the rendered
# HealthCheckProgram run by slurmd, the node's driver in its jobs (gpu=on),
# and the NCCL CronJob's command with the fake all_reduce_perf (replaying
# real outputs) installed in the jail, as users install nccl-tests there.

load helpers

fixtures=$root/../shared/fixtures
fake_nvml=${SLURM_JAIL_BUILD_DIR:-$root/build}/tests/health/fake-nvml/libnvidia-ml.so.1
fake_drivers=${SLURM_JAIL_BUILD_DIR:-$root/build}/tests/fakes/nvidia-driver
gpu_node=t-slurm-cluster-gpu-0
# The GPU node's driver root: root-owned all the way (chroot.so refuses a
# driver below a directory others can write, such as /tmp).
driver_root=/run/slurm-jail-chart-test-nvidia-$BATS_ROOT_PID

setup_file() {
    require_helm_tools "$root" yaml
    build_images
    [ -f "$fake_nvml" ] && [ -f "$fake_drivers/580.159.04/bin/nvidia-smi" ] || {
        cmake -S "$root" -B "${SLURM_JAIL_BUILD_DIR:-$root/build}" -DSLURM_JAIL_WERROR=ON >/dev/null &&
            cmake --build "${SLURM_JAIL_BUILD_DIR:-$root/build}" --target fake_nvml fake_nvidia_drivers >/dev/null
    }
    make_fake_gpus "$BATS_FILE_TMPDIR/fake-gpu"
    make_driver_root "$driver_root"
    make_values "$BATS_FILE_TMPDIR/fake-gpu" >"$BATS_FILE_TMPDIR/health.yaml"
    release_start -f "$BATS_FILE_TMPDIR/health.yaml"
    wait_for_nodes 2
    install_fake_nccl_tests "$KR_STATE/volumes/t-slurm-cluster-jail/opt/nccl-tests"
}

teardown() { dump_release; }

teardown_file() {
    release_stop
    rm -rf "$driver_root"
}

# make_driver_root DIR: a fake NVIDIA driver laid out as the container
# toolkit lays one out (lib64/, bin/).
make_driver_root() {
    install -d -m 0755 "$1" "$1/lib64" "$1/bin"
    cp -a "$fake_drivers/580.159.04/lib/." "$1/lib64/"
    install -m 0755 "$fake_drivers/580.159.04/bin/nvidia-smi" "$1/bin/"
}

# make_fake_gpus DIR: what the GPU pods get instead of GPUs (hostPath).
make_fake_gpus() {
    local d=$1 i
    mkdir -p "$d/dev"
    install -m 0644 "$fake_nvml" "$d/libnvidia-ml.so.1"
    install -m 0644 "$fixtures/nvidia-smi/02_h100_sxm_query-gpu_csv_idle.txt" "$d/query-gpu.csv"
    for i in 0 1 2 3; do : >"$d/dev/nvidia$i"; done
    echo none >"$d/fault"
    # The chart's health-check execs this in place of slurm-jail-gpu-check:
    # slurmd gives it a bare environment, so the fake library's settings
    # (which a real NVML does not need) are set here; nothing else is.
    cat >"$d/gpu-check" <<'SH'
#!/bin/sh
export FAKE_NVML_CSV=/opt/fake-gpu/query-gpu.csv FAKE_NVML_GPUS=4
FAKE_NVML_FAULT=$(cat /opt/fake-gpu/fault)
export FAKE_NVML_FAULT
echo "$(date +%s) ${SLURMD_NODENAME:-?} fault=$FAKE_NVML_FAULT" >>/opt/fake-gpu/runs.log
exec /usr/sbin/slurm-jail-gpu-check "$@"
SH
    chmod 0755 "$d/gpu-check"
}

# make_values DIR: a CPU nodeset and a GPU nodeset of 4 fake GPUs, the quick
# check every 3 s, the NCCL CronJob judging A100x4 runs.
make_values() {
    local d=$1 i
    cat <<EOF
nodesets:
  cpu:
    replicas: 1
  gpu:
    replicas: 1
    gpus: 4
    features: [a100]
    gpuDriverRoot: $driver_root
    extraVolumes:
      - {name: fake-gpu, hostPath: {path: $d, type: Directory}}
$(for i in 0 1 2 3; do echo "      - {name: nvidia$i, hostPath: {path: $d/dev/nvidia$i, type: File}}"; done)
    extraVolumeMounts:
      - {name: fake-gpu, mountPath: /opt/fake-gpu}
$(for i in 0 1 2 3; do echo "      - {name: nvidia$i, mountPath: /dev/nvidia$i}"; done)
partitions:
  - {name: main, nodesets: [cpu], default: true}
  - {name: gpu, nodesets: [gpu]}
# A single-directory jail (the chart's layout before generations): the
# fake nccl-tests are installed at the volume's top, which is the jail.
jail:
  populate:
    generations: false
healthChecks:
  interval: 3
  gpuCheckCommand: /opt/fake-gpu/gpu-check
  gpuCheck:
    nvml-library: /opt/fake-gpu/libnvidia-ml.so.1
    kernel-log: /dev/null
  nccl:
    enabled: true
    check:
      binary: /opt/nccl-tests/all_reduce_perf
      gpu-model: A100
      gpus: 4
      env: FAKE_NCCL_FIXTURE=/opt/nccl-tests/result.txt
    submit:
      partition: gpu
EOF
}

# install_fake_nccl_tests DIR (in the jail volume): all_reduce_perf that
# prints result.txt, a real healthy 4xA100 run to begin with.
install_fake_nccl_tests() {
    install -d -m 0755 "$1"
    install -m 0755 "$root/tests/health/fake_all_reduce_perf" "$1/all_reduce_perf"
    install -m 0644 "$fixtures/nccl/04_healthy_4gpu_nvswitch_a100.txt" "$1/result.txt"
}

# wait_for_node NODE REGEX: until "state|reason" of NODE matches (60 s).
wait_for_node() {
    local info=
    for _ in $(seq 1 120); do
        info=$(ctl sinfo -h -N -n "$1" -o '%T|%E' 2>/dev/null | head -1)
        [[ $info =~ ^($2)$ ]] && return 0
        sleep 0.5
    done
    echo "$1 is '$info', wanted '$2'" >&2
    tail -5 "$BATS_FILE_TMPDIR/fake-gpu/runs.log" >&2 || true
    return 1
}

# wait_for_job ID: until it ended; prints "STATE EXITCODE".
wait_for_job() {
    local s=
    for _ in $(seq 1 120); do
        s=$(ctl squeue -h -j "$1" -o %T 2>/dev/null || true)
        [ -n "$s" ] || break
        sleep 0.5
    done
    ctl scontrol show job "$1" | grep -oE 'JobState=[A-Z]+|ExitCode=[0-9:]+' | cut -d= -f2 | tr '\n' ' '
}

@test "health: the GPU nodeset registers its GPUs; slurmd runs the chart's HealthCheckProgram on it, and only on it" {
    run ctl sinfo -h -N -o '%N %G %f' -p gpu
    assert_output "$gpu_node gpu:4 nodeset-gpu,a100"
    run ctl scontrol show config
    assert_line --regexp '^HealthCheckProgram += /opt/slurm-jail-chart/health-check$'
    # slurmd ran it (at start, then every 3 s): on the GPU node, with the fake GPUs
    for _ in $(seq 20); do grep -q "$gpu_node fault=none" "$BATS_FILE_TMPDIR/fake-gpu/runs.log" 2>/dev/null && break; sleep 0.5; done
    run cat "$BATS_FILE_TMPDIR/fake-gpu/runs.log"
    assert_line --regexp "^[0-9]+ $gpu_node fault=none$"
    refute_output --partial t-slurm-cluster-cpu-0
    wait_for_node "$gpu_node" 'idle\|none'
}

@test "GPU nodes: jobs on the GPU node get its driver by name from gpuDriverRoot; the CPU node has none" {
    run ctl srun -p gpu nvidia-smi
    assert_success
    assert_line 'Driver Version: 580.159.04'
    assert_line 'NVML: /usr/local/nvidia/lib64/libnvidia-ml.so.1'
    run ctl srun -p main nvidia-smi
    assert_failure
    assert_output --partial 'nvidia-smi: No such file or directory'
    # The GPU nodeset's plugin line requires the driver (gpu=on): without it,
    # no job starts there.
    run kr exec "$gpu_node" -- cat /etc/slurm/plugstack.conf
    assert_output --regexp "^required chroot.so jail=/mnt/jail .*gpu=on gpu_driver_root=$driver_root\$"
    mv "$driver_root/lib64" "$driver_root/lib64.away"
    run ctl srun -p gpu echo TASK-RAN
    mv "$driver_root/lib64.away" "$driver_root/lib64"
    assert_failure
    refute_output --partial TASK-RAN
    assert_output --partial "no NVIDIA driver found on this node (gpu=on)"
    run ctl srun -p gpu nvidia-smi
    assert_success
}

@test "health: a GPU fault drains the GPU node with the check's reason; the repair resumes it" {
    echo lost >"$BATS_FILE_TMPDIR/fake-gpu/fault"
    wait_for_node "$gpu_node" 'drained\|slurm-jail-health: gpu: .*'
    run ctl sinfo -h -N -n "$gpu_node" -o %E
    assert_output --partial 'slurm-jail-health: gpu: GPU 3'
    run ctl sinfo -h -N -n t-slurm-cluster-cpu-0 -o %T
    assert_output idle
    echo none >"$BATS_FILE_TMPDIR/fake-gpu/fault"
    # Resumed: idle again. Slurm 22.05 clears the reason on resume;
    # 24.11 keeps it (on an idle node, where sinfo -R no longer lists it).
    wait_for_node "$gpu_node" 'idle\|(none|slurm-jail-health: gpu: GPU 3: .*)'
}

@test "health: the NCCL CronJob's command runs one exclusive check job on the GPU node, in the jail; a healthy run keeps it" {
    run kr run-cronjob t-slurm-cluster-nccl-check
    assert_success
    assert_line --regexp "^$gpu_node: Submitted batch job [0-9]+$"
    assert_line 'submitted 1 job(s), skipped 0 node(s)'
    refute_output --partial t-slurm-cluster-cpu-0 # partition gpu only
    local job
    job=$(grep -oE "^$gpu_node: Submitted batch job [0-9]+" <<<"$output" | grep -oE '[0-9]+$')
    run wait_for_job "$job"
    assert_output 'COMPLETED 0:0 '
    # its output went to root's home in the jail (the job's own /tmp went with it)
    run cat "$KR_STATE/volumes/t-slurm-cluster-jail/root/nccl-check-$gpu_node-$job.out"
    assert_output --partial '234.7'
    run ctl scontrol show job "$job"
    assert_output --partial 'OverSubscribe=NO' # --exclusive
    wait_for_node "$gpu_node" 'idle\|none'
}

@test "health: a low-bandwidth NCCL run drains the GPU node; the passing quick check does not resume it" {
    install -m 0644 "$fixtures/nccl/05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt" \
        "$KR_STATE/volumes/t-slurm-cluster-jail/opt/nccl-tests/result.txt"
    run kr run-cronjob t-slurm-cluster-nccl-check
    assert_success
    local job
    job=$(grep -oE "^$gpu_node: Submitted batch job [0-9]+" <<<"$output" | grep -oE '[0-9]+$')
    run wait_for_job "$job"
    assert_output --regexp '^(COMPLETED|FAILED) [0-9]+:0 $'
    wait_for_node "$gpu_node" 'drained\|slurm-jail-health: nccl: .*'
    run ctl sinfo -h -N -n "$gpu_node" -o %E
    assert_output --partial 'busbw 5.2'
    # several quick checks pass meanwhile; the node stays drained for the NCCL cause
    sleep 8
    run ctl sinfo -h -N -n "$gpu_node" -o '%T|%E'
    assert_output --regexp '^drained\|slurm-jail-health: nccl: '
}
