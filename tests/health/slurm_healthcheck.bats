#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The quick check wired into slurm.conf as the README shows
# (HealthCheckProgram, HealthCheckInterval, HealthCheckNodeState), run by a
# REAL slurmd: it drains the node on a GPU fault and resumes it when fixed.

load helpers
load cluster

setup_file() {
    local dir=$BATS_FILE_TMPDIR cluster
    cluster=$(mktemp -d /tmp/sjh-cluster.XXXXXX)
    echo none >"$dir/fault"
    # slurmd gives the program a bare environment: the wrapper sets what the
    # test needs (in production the program runs with no wrapper at all).
    cat >"$dir/healthcheck" <<SH
#!/bin/sh
export FAKE_NVML_CSV=$FAKE_NVML_CSV
export FAKE_NVML_FAULT=\$(cat $dir/fault)
export SLURM_CONF=$cluster/etc/slurm.conf
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
exec $HEALTH_BIN/slurm-jail-gpu-check --config /dev/null --nvml-library $FAKE_NVML \\
    --expected-gpus 8 --kernel-log /dev/null --state-dir $dir/state >>$dir/healthcheck.log 2>&1
SH
    chmod +x "$dir/healthcheck"
    export SJH_EXTRA_CONF="HealthCheckProgram=$dir/healthcheck
HealthCheckInterval=2
HealthCheckNodeState=ANY"
    cluster_start "$cluster"
}

teardown_file() {
    cluster_stop
}

# wait_for REGEX: until "state|reason" of n1 matches (max 60 s)
wait_for() {
    local info
    for _ in $(seq 1 120); do
        info=$(sinfo -h -N -n n1 -o '%T|%E' | sed 's/^\([a-z]*\)\*|/\1|/')
        [[ $info =~ ^($1)$ ]] && return 0
        sleep 0.5
    done
    echo "n1 is '$info', wanted '$1'; health check log:" >&2
    cat "$BATS_FILE_TMPDIR/healthcheck.log" >&2 || true
    return 1
}

@test "slurmd runs the check: a GPU fault drains the node, the repair resumes it" {
    echo nvlink >"$BATS_FILE_TMPDIR/fault"
    wait_for 'drained\|slurm-jail-health: gpu: GPU 3 \(00000000:48:00.0\): 1 of 18 NVLinks inactive \(links 5\)'
    echo none >"$BATS_FILE_TMPDIR/fault"
    wait_for 'idle\|none'
    run grep -c 'check passed; resuming' "$BATS_FILE_TMPDIR/healthcheck.log"
    assert_output 1
}
