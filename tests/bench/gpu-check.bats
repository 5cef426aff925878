#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# bench/gpu-check's parts that need no GPU: the jail of this machine's own
# root, entered as a job step (sjail-step-run) with the node's driver bound
# (the fake driver here), and the report from samples. The GPU work itself
# runs only on a machine with a GPU (bench/README.md).

setup() {
    load /usr/lib/bats/bats-support/load.bash
    load /usr/lib/bats/bats-assert/load.bash
    root=${SLURM_JAIL_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
    build=${SLURM_JAIL_BUILD_DIR:-$root/build}
}

teardown() {
    if [ -f "$BATS_TEST_TMPDIR/made-nvidia-dir" ]; then rmdir /usr/local/nvidia; fi
}

# As on GPU machines, the jail's /usr (this machine's) has the driver tree's
# mount point; made here when missing, and removed again.
ensure_driver_mount_point() {
    if [ ! -d /usr/local/nvidia ]; then
        mkdir -m 0755 /usr/local/nvidia
        : >"$BATS_TEST_TMPDIR/made-nvidia-dir"
    fi
}

@test "gpu-check --jail-only: a task in the jail of this machine's root sees the jail and the node's driver" {
    [ "$(id -u)" -eq 0 ] || fail "needs root"
    ensure_driver_mount_point
    local fake=$build/tests/fakes/nvidia-driver/550.54.15
    [ -x "$fake/bin/nvidia-smi" ] || fail "no fake driver at $fake (cmake --build build)"
    # The driver in a root-owned place of its own, in this test's namespace only.
    run unshare --mount --propagation private -- bash -c '
        set -e
        install -d -m 0755 /run/sjail-gpu-test
        mount -t tmpfs -o mode=0755 sjail-gpu-test /run/sjail-gpu-test
        cp -a "$1" /run/sjail-gpu-test/nvidia
        "$2" --jail-only --tools "$3" --settings "gpu_driver_root=/run/sjail-gpu-test/nvidia"
    ' _ "$fake" "$root/bench/gpu-check" "$build"
    rmdir /run/sjail-gpu-test
    assert_success
    assert_line --partial "jail of this machine's root at /run/sjail-gpu-check/jail"
    assert_line "inside:  Driver Version: 550.54.15"
    assert_line "NVML: /usr/local/nvidia/lib64/libnvidia-ml.so.1"
    # Then what the plugin bound of the node's driver (its STATE/gpu).
    assert_line --regexp '^gpu=on'
    # Nothing stays: the jail and the work directory went with the namespace.
    [ ! -e /run/sjail-gpu-check ]
    [ ! -e /var/tmp/sjail-gpu-check ]
    run findmnt -rn -o TARGET
    refute_output --partial sjail-gpu
}

@test "sjail-step-run: the task is born in a job of its own, the jail as /, and the job is deleted" {
    [ "$(id -u)" -eq 0 ] || fail "needs root"
    ensure_driver_mount_point
    # shellcheck source=bench/lib/gpu-jail.sh
    run unshare --mount --propagation private -- bash -c '
        set -e
        . "$1/bench/lib/gpu-jail.sh"
        make_machine_jail /run/sjail-gpu-check
        settings=$(gpu_jail_settings /run/sjail-gpu-check)
        "$2" --settings "$settings gpu=off" --job 77 -- sh -c \
            "test -e /.sjail-gpu-check-jail && echo in-jail processes=\$(ls /proc | grep -c \"^[0-9]\")"
        "$2" --settings "$settings gpu=off" --job 78 -- sh -c "exit 7" || echo "status=$?"
        echo "jobs left: $(ls -A /run/sjail-gpu-check/state/jobs 2>/dev/null | wc -l)"
        "$2" --settings "jail=/run/sjail-gpu-check/no-such-jail state=/run/sjail-gpu-check/s2" -- true ||
            echo "status=$?"
    ' _ "$root" "$(find "$build" -name sjail-step-run -type f | head -n 1)"
    rmdir /run/sjail-gpu-check /var/tmp/sjail-gpu-check
    assert_success
    # The job's PID namespace: its init, the shell and ls, not the machine's processes.
    assert_line --regexp '^in-jail processes=[1-5]$'
    assert_line "status=7"
    assert_line "jobs left: 0"
    assert_line --regexp '^sjail-step-run: entering the job.s view: .*no-such-jail'
    assert_line "status=125"
}

@test "gpu-report: medians, ratios inside/outside and the targets with PASS or MISS" {
    local samples=$BATS_TEST_TMPDIR/samples.jsonl
    {
        for v in 2 3; do echo "{\"figure\":\"entry_ms\",\"side\":\"outside\",\"value\":$v}"; done
        for v in 9 11; do echo "{\"figure\":\"entry_ms\",\"side\":\"inside\",\"value\":$v}"; done
        for v in 316 318 330; do echo "{\"figure\":\"cuda_init_ms\",\"side\":\"outside\",\"value\":$v}"; done
        for v in 328 334 340; do echo "{\"figure\":\"cuda_init_ms\",\"side\":\"inside\",\"value\":$v}"; done
        for v in 797 799; do echo "{\"figure\":\"matmul_tflops\",\"side\":\"outside\",\"value\":$v}"; done
        for v in 796 798; do echo "{\"figure\":\"matmul_tflops\",\"side\":\"inside\",\"value\":$v}"; done
        for v in 3015 3020; do echo "{\"figure\":\"copy_gbps\",\"side\":\"outside\",\"value\":$v}"; done
        for v in 2900 2950; do echo "{\"figure\":\"copy_gbps\",\"side\":\"inside\",\"value\":$v}"; done
    } >"$samples"
    local machine='{"gpu":"NVIDIA H100 80GB HBM3","gpus":1,"driver":"580.159.04","os":"Ubuntu 24.04.3 LTS","kernel":"6.18","date":"2026-11-26","driver_view":"gpu=on: bound /usr/local/nvidia\nskipped: a symlink\n","checks":{"slurm-jail-gpu-check (node)":"pass"}}'
    run "$root/bench/lib/gpu-report" "$samples" "$machine" "$BATS_TEST_TMPDIR/gpu"
    assert_success
    run jq -c '[.figures.cuda_init_ms.median_outside, .figures.cuda_init_ms.median_inside,
                .figures.matmul_tflops.median_outside, .figures.copy_gbps.median_inside]' "$BATS_TEST_TMPDIR/gpu.json"
    assert_output '[318,334,798,2925]'
    run jq -r '.targets[] | "\(.name) \(.result)"' "$BATS_TEST_TMPDIR/gpu.json"
    assert_output "copy_gbps_ratio MISS
matmul_tflops_ratio PASS
cuda_init_ms_slower_inside MISS"
    run cat "$BATS_TEST_TMPDIR/gpu.md"
    assert_line --partial "1 x NVIDIA H100 80GB HBM3, driver 580.159.04, Ubuntu 24.04.3 LTS"
    assert_line "| matmul_tflops | TFLOP/s | 798 | 797 | 0.999 | 797 799 | 796 798 |"
    assert_line "| cuda_init_ms_slower_inside | 16 | <= 15 | MISS |"
    # Entry is shown beside CUDA init, with no target of its own.
    assert_line "| entry_ms | ms | 2.5 | 10 | 4 | 2 3 | 9 11 |"
    # The node's driver view closes the report, as the plugin wrote it.
    assert_line --index -2 "skipped: a symlink"
    assert_line --index -1 '```'
}

@test "gpu-check --help names the figures and the targets; it refuses bad arguments" {
    run "$root/bench/gpu-check" --help
    assert_success
    assert_output --partial "inside/outside at least 0.99 for matmul"
    run "$root/bench/gpu-check" --rounds x
    assert_failure
    assert_output --partial "--rounds 'x': give a number from 1 to 99"
}
