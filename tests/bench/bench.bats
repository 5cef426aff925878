#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# CI smoke of the benchmarks (bench/run-all --quick): they must run and
# produce complete results. Timings are never asserted here: a missed target
# is a PASS/MISS line in the report, not a test failure.

setup_file() {
    root=${SLURM_JAIL_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
    export root
    export SLURM_JAIL_BUILD_DIR=${SLURM_JAIL_BUILD_DIR:-$root/build}
    export out=$BATS_FILE_TMPDIR/results
    "$root/bench/run-all" --quick --out "$out" >"$BATS_FILE_TMPDIR/run.log" 2>&1 ||
        { cat "$BATS_FILE_TMPDIR/run.log" >&3; return 1; }
}

json() { jq -e "$@" "$out/latest.json"; }

@test "run-all --quick writes latest.json and latest.md" {
    [ -s "$out/latest.json" ]
    [ -s "$out/latest.md" ]
    json '.mode == "quick" and .schema == 1'
}

@test "the machine is described" {
    json '.machine | (.cpu | length > 0) and .cpus > 0 and .memory_gib > 0 and (.kernel | length > 0) and (.slurm | length > 0) and (.git_commit | length > 0)'
}

@test "micro-benchmark: every host-mount x bind configuration, every metric sampled" {
    # shellcheck disable=SC2016 # a jq program, not shell
    json '[.micro.configs[] | [.host_mounts, .binds]] | sort == ([[50, 500, 5000][] as $m | [5, 10, 20, 100][] as $b | [$m, $b]] | sort)'
    json '[.micro.configs[] | .entry_total, .step_prepare, .floor, .stamp_check, .enter, .task_check, .build, .fresh_namespace
           | select(.n > 0 and .median_us > 0 and .p99_us >= .median_us)] | length == 96'
    # The per-job path: step, PID namespace, task view, job make and delete.
    json '[.micro.configs[] | .job_entry_total, .job_step, .job_pid, .job_task, .job_make, .job_delete
           | select(.n > 0 and .median_us > 0 and .p99_us >= .median_us)] | length == 72'
}

@test "micro-benchmark: steps joined through the node watch where the kernel has one" {
    json '.micro.node_watch == "on" or (.micro.node_watch | startswith("off: "))'
    json 'if .micro.node_watch == "on" then all(.micro.configs[]; .watched_entries > 0) else true end'
}

@test "micro-benchmark: the node really had the requested host mounts" {
    json '[.micro.configs[] | select(.host_mounts_actual == .host_mounts)] | length == 12'
}

@test "micro-benchmark: 5000-vs-50 ratios for every bind count and metric" {
    json '[.micro.ratios[] | select(.low_mounts == 50 and .high_mounts == 5000 and .ratio > 0)] | length == 56'
}

@test "micro-benchmark: the per-step stamp check is measured at 50, 500 and 5000 host mounts" {
    json '[.micro.configs[] | select(.stamp_check.n == .step_prepare.n and .stamp_check.median_us > 0)] | length == 12'
    json '[.micro.configs[].host_mounts] | unique == [50, 500, 5000]'
    json '[.micro.ratios[] | select(.metric == "stamp_check" and .ratio > 0) | .binds] == [5, 10, 20, 100]'
    grep -q '| stamp check |' "$out/latest.md"
}

@test "cluster: every launch benchmark ran its A B pairs" {
    json '[.cluster.launch[] | select((.pairs | length) == 3 and .median_ratio > 0)] | map(.name) == ["srun1", "wide", "sbatch", "srun1_jc", "wide_jc"]'
}

@test "cluster: memory snapshots with and without the plugin" {
    json '.cluster.memory.snapshots | length == 4 and all(.[]; .slurmstepd.rss_kb > 0 and .slurmd_node1.fds > 0 and .slurmd_node2.rss_kb > 0)'
}

@test "cluster: job cleanup with the job container, before and after" {
    json '.cluster.cleanup.snapshots | length == 2 and all(.[]; .slurmd_node1.fds > 0 and .slurmd_node2.node_processes > 0 and .host_mounts > 0)'
    json '.cluster.cleanup.jobs == 30 and (.cluster.cleanup.job_state_entries_after | type) == "number"'
}

@test "every target is reported with PASS or MISS" {
    json '[.targets[].name] == ["entry_median_50", "entry_floor_ratio_50", "entry_median_5000", "entry_ratio_5000_50", "entry_binds_ratio_100_5", "step_cost_ratio_5000_50", "job_entry_median_50", "job_entry_median_5000", "job_entry_ratio_5000_50", "srun1_ratio", "wide_ratio", "srun1_jc_ratio", "wide_jc_ratio", "slurmd_fd_growth", "slurmd_rss_growth_attributable", "slurmd_mount_growth", "slurmstepd_fd_growth", "slurmstepd_rss_growth", "spank_job_state_left", "spank_process_growth", "spank_mount_growth", "jc_job_state_left", "jc_mount_growth", "jc_process_growth", "jc_slurmd_fd_growth"]'
    json 'all(.targets[]; .result == "PASS" or .result == "MISS")'
}

@test "the table shows every target and both benchmarks" {
    grep -q '^## Targets' "$out/latest.md"
    grep -q '^## Jail entry micro-benchmark' "$out/latest.md"
    grep -q '^## Step launch on the local cluster' "$out/latest.md"
    grep -q '^### Step entry with per-job namespaces' "$out/latest.md"
    grep -q '^## Job cleanup with the job container' "$out/latest.md"
    [ "$(grep -cE '\*\*(PASS|MISS)\*\*' "$out/latest.md")" -eq 25 ]
}

@test "nothing is left behind: no bench mounts, no cluster processes" {
    run grep -c 'sjail-bench' /proc/self/mountinfo
    [ "$output" = 0 ]
    run pgrep -f '^[^ ]*sjail-entry-bench'
    [ "$status" -eq 1 ]
    [ ! -e /var/lib/sjail-bench-cluster ]
    [ ! -e /var/lib/sjail-bench-cluster-jc ]
}

@test "every script has --help" {
    for s in bench/run-all bench/cluster-bench; do
        run "$root/$s" --help
        [ "$status" -eq 0 ]
        [[ $output == Usage:* ]]
    done
    run "$SLURM_JAIL_BUILD_DIR/bench/sjail-entry-bench" --help
    [ "$status" -eq 0 ]
}
