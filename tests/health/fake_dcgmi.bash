# SPDX-License-Identifier: Apache-2.0
# A stand-in for DCGM's dcgmi, shared by the tests that run
# slurm-jail-gpu-check with --dcgm-level (tests/health/dcgm_check.bats,
# tests/helm/grafana-dashboard-queries.bats). The check runs dcgmi with a
# clean environment, so what the fake does is written into it.

# write_fake_dcgmi DIR ARGS_FILE OUTPUT [EXIT [SLEEP]]: writes DIR/dcgmi (DIR
# made 0755, as the check's trusted lookup wants), which writes its arguments
# to ARGS_FILE, sleeps SLEEP seconds, prints the file OUTPUT (a recorded
# `dcgmi diag -j` output from tests/health/fixtures/dcgm) and exits with EXIT;
# prints the fake's path.
write_fake_dcgmi() {
    local dir=$1 args=$2 output=$3 code=${4:-0} delay=${5:-0}
    mkdir -p "$dir"
    chmod 0755 "$dir"
    cat >"$dir/dcgmi" <<SCRIPT
#!/bin/sh
echo "\$*" >"$args"
[ "$delay" = 0 ] || sleep $delay
cat "$output"
exit $code
SCRIPT
    chmod 0755 "$dir/dcgmi"
    echo "$dir/dcgmi"
}
