#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Runs the wall-time benchmark of the quick check and shows its numbers in the
# test log. A measurement, not a speed test: only the report's form is checked.

load helpers

@test "benchmark: quick check wall time on the fake 8x H100 node (median of 30 runs)" {
    run "$SLURM_JAIL_ROOT/health/bench/gpu-check-walltime" 30
    assert_success
    assert_line --regexp '^  median [0-9.]+ ms   p90 [0-9.]+ ms   min [0-9.]+ ms   max [0-9.]+ ms$'
    printf '# %s\n' "${lines[@]}" >&3
}
