# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# What a healthy start of slurmctld may log as an error, named once for every
# test that reads its log (tests/e2e/08-local-cluster, tests/compat).

# ctld_start_errors LOG [first-start]: the error: lines of LOG that a healthy
# start does not log; prints nothing when there are none. Never counted:
# "High latency for 1000 calls to gettimeofday()": slurmctld times the clock
# as it starts and reports a busy machine as an error; it names the load
# beside the cluster (the CI runs suites side by side), not the cluster.
# With first-start, also not: a first start on a release has no state to
# recover (local-cluster drops another release's saved state), which Slurm
# up to 24.11 logs as errors.
ctld_start_errors() {
    local -a allowed=(-e 'error: High latency for 1000 calls to gettimeofday()')
    if [ "${2:-}" = first-start ]; then
        allowed+=(-e 'error: Could not open [a-z]* state file ' -e 'error: NOTE: Trying backup state save file')
    fi
    grep -F 'error:' "$1" | grep -v "${allowed[@]}" || true
}
