# SPDX-License-Identifier: Apache-2.0
# Shared setup for the health Bats tests.
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

: "${SLURM_JAIL_ROOT:?run through tests/run-all, or set SLURM_JAIL_ROOT}"
: "${SLURM_JAIL_BUILD_DIR:?run through tests/run-all, or set SLURM_JAIL_BUILD_DIR}"
HEALTH_BIN=$SLURM_JAIL_BUILD_DIR/health
FIXTURES=$(cd "$SLURM_JAIL_ROOT/../shared/fixtures" && pwd)
FAKE_NVML=$SLURM_JAIL_BUILD_DIR/tests/health/fake-nvml/libnvidia-ml.so.1
FAKE_NCCL=$SLURM_JAIL_ROOT/tests/health/fake_all_reduce_perf
export FAKE_NVML_CSV=$FIXTURES/nvidia-smi/02_h100_sxm_query-gpu_csv_idle.txt
# The fake NVML presents the recorded H200 VM instead when FAKE_NVML_QUERY names this.
# shellcheck disable=SC2034 # used by the .bats files
H200_QUERY=$FIXTURES/nvidia-smi/07_h200_nvidia-smi-q_idle.txt

gpu_check() {
    "$HEALTH_BIN/slurm-jail-gpu-check" --config /dev/null --nvml-library "$FAKE_NVML" "$@"
}

# all_reduce_perf gets a clean environment (a fixed PATH, CUDA_VISIBLE_DEVICES
# and --env only), so the fake's settings from the test's environment travel
# as --env.
fake_nccl_env_args() {
    local v
    for v in FAKE_NCCL_FIXTURE FAKE_NCCL_EXIT FAKE_NCCL_DELAY FAKE_NCCL_ARGS FAKE_NCCL_ENV; do
        [ -z "${!v:-}" ] || printf -- '--env\n%s=%s\n' "$v" "${!v}"
    done
}

nccl_check() {
    local fake_env=()
    mapfile -t fake_env < <(fake_nccl_env_args)
    "$HEALTH_BIN/slurm-jail-nccl-check" --config /dev/null --binary "$FAKE_NCCL" "${fake_env[@]}" "$@"
}

nccl_submit() {
    "$HEALTH_BIN/slurm-jail-nccl-submit" --config /dev/null "$@"
}

# An empty kernel log (Xids are tested on their own).
empty_kmsg() {
    : >"$BATS_TEST_TMPDIR/kmsg"
    echo "$BATS_TEST_TMPDIR/kmsg"
}

# Milliseconds since some fixed point.
now_ms() { echo $(($(date +%s%N) / 1000000)); }
