#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The multi-node NCCL check on four fake-GPU nodes (local-cluster up
# --fake-gpu --workers 4): slurm-jail-nccl-submit --fabric submits one job
# across every node, whose slurm-jail-nccl-fabric runs, as root in the jail,
# an all_reduce_perf stand-in that is a real Open MPI program (srun
# --mpi=pmix, one rank per GPU) and reports 5 GB/s instead of 40 when a node
# whose own spool holds a marker file is in its group. After a failure it
# runs the four ring pairs and drains only the node to blame, with the
# pairs' busbw in the reason; a failure no single node explains drains
# nobody, and a run never drains more than --max-drain-fraction of its nodes.

bats_require_minimum_version 1.8.0
# Open MPI's TCP transport between these namespaced nodes, on a machine as
# loaded as a CI run, now and then fails to connect a peer and its rank 0
# dies (SIGSEGV after "client connect fail"): the run is then a launch
# failure, not a verdict. A test that fails is run once more; a real fault
# fails both times.
BATS_TEST_RETRIES=1

load helpers
# shellcheck source=tests/lib/prometheus.bash
. "$BATS_TEST_DIRNAME/../lib/prometheus.bash"

FABRIC_DIR=/opt/e2e-fabric
ARP=$FABRIC_DIR/all_reduce_perf
MARKER_NAME=e2e-fabric-degraded
# The slow-node run's --metrics-file, in the jail; the dashboard test reads
# the copy that run leaves in $BATS_FILE_TMPDIR/textfile.
METRICS=/var/lib/slurm-jail/health/slurm_jail_nccl_fabric.prom
DASHBOARD=$BATS_TEST_DIRNAME/../../helm/slurm-cluster/files/dashboards/slurm-jail-health.json
NODES=(node1 node2 node3 node4)

setup_file() {
    # The suite's cluster has two CPU nodes; this file needs four GPU ones.
    use_cluster --fake-gpu --workers 4
    # Built on the host against Debian's Open MPI; the jail has the same
    # libopenmpi3. Root-owned, as the check demands of what it runs as root.
    install -d -m 0755 "$JAIL$FABRIC_DIR"
    mpicc.openmpi -O2 -o "$JAIL$ARP" "$BATS_TEST_DIRNAME/mpi/fabric_all_reduce_perf.c"
    chmod 0755 "$JAIL$ARP"
}

teardown_file() {
    prom_stop "$BATS_FILE_TMPDIR/prometheus"
    rm -rf "${JAIL:?}$FABRIC_DIR" "$JAIL/var/lib/slurm-jail/health"
}

setup() {
    load_assertions
}

teardown() {
    local n
    for n in "${NODES[@]}"; do
        rm -f "$STATE/nodes/$n/spool/$MARKER_NAME"
        if [ "$(ctld_exec sinfo -h -n "$n" -o %T)" != idle ]; then
            ctld_exec scontrol update nodename="$n" state=resume || true
        fi
    done
    rm -f "$JAIL"/root/fabric-*.out "$JAIL"/var/lib/slurm-jail/health/nccl-fabric.*
    wait_until 20 all_idle
}

all_idle() { [ "$(ctld_exec sinfo -h -N -o %T | sort -u)" = idle ]; }
no_jobs() { [ -z "$(ctld_exec squeue -h)" ]; }
node_job_running() { [ "$(ctld_exec squeue -h -j "$1" -o %T)" = RUNNING ]; }

MPI_ENV=(--env OMPI_MCA_pml=ob1 --env OMPI_MCA_btl=self,tcp --env OMPI_MCA_osc=^ucx)

# mark NODE: the node's fabric is slow; only that node's jobs see the file.
mark() { touch "$STATE/nodes/$1/spool/$MARKER_NAME"; }

# fabric [CHECK-ARG...]: what the CronJob does, as root on node1's view of
# the cluster; waits for the job and prints its output. Open MPI's own TCP
# transport (ob1, tcp) and no UCX at all (its one-sided component loads UCX
# even under ob1): through UCX, four ranks on these namespaced nodes hang or
# crash now and then in their first exchange. The --env settings are how a
# site passes its fabric's settings, and the stand-in prints NCCL_IB_HCA.
fabric() {
    nsenter -t "$(slurmd_pid node1)" -m -u -n -- "$SLURM_JAIL_BUILD_DIR/health/slurm-jail-nccl-submit" \
        --config /dev/null --fabric --sbatch-arg=--chdir=/ --sbatch-arg=--output=/root/fabric-%j.out \
        --sbatch-arg=--time=2 -- --gpu-model H200 --gpus 1 --binary "$ARP" \
        --threshold H200x1x2=30 --env NCCL_IB_HCA=mlx5_0:1 "${MPI_ENV[@]}" \
        --timeout 60 "$@" || return
    wait_until 60 no_jobs
    cat "$JAIL"/root/fabric-*.out
}

# drained_nodes: "NODE|REASON" of every node not idle.
drained_nodes() { ctld_exec sinfo -h -N -o '%N|%T|%E' | grep -v '|idle|' || true; }

@test "a healthy fabric: one MPI run across the four nodes passes, nobody is drained" {
    run fabric
    assert_success
    assert_line 'testing 4 nodes (node1,node2,node3,node4), H200 x 1 GPUs, one rank each'
    assert_line 'PASS node1+node2+node3+node4: busbw 40.00 GB/s at 8 GiB >= 30 GB/s expected for H200x1x2'
    # Every rank ran on its own node, and the fabric settings reached them.
    local n
    for n in "${NODES[@]}"; do assert_output --regexp "Rank +[0-3] Group  0 Pid +1 on +$n device"; done
    assert_line '# NCCL_IB_HCA=mlx5_0:1'
    refute_output --partial 'FAIL'
    assert_equal "$(drained_nodes)" ''
}

@test "one slow node: the pairs single it out and it alone is drained, with the pairs' busbw in its reason" {
    mark node3
    run fabric --metrics-file "$METRICS"
    assert_success
    # The whole run fails: on the slow node's bandwidth, or, under a CI
    # run's load, now and then on Open MPI's TCP connect across the four
    # nodes (rank 0 dies before a verdict); either way the pairs decide.
    assert_line --regexp '^FAIL node1\+node2\+node3\+node4: (busbw 5\.00 GB/s at 8 GiB < 30 GB/s expected for H200x1x2|all_reduce_perf exited with code)'
    assert_line 'PASS node1+node2: busbw 40.00 GB/s at 8 GiB >= 30 GB/s expected for H200x1x2'
    assert_line 'FAIL node3+node4: busbw 5.00 GB/s at 8 GiB < 30 GB/s expected for H200x1x2'
    assert_line 'FAIL node2+node3: busbw 5.00 GB/s at 8 GiB < 30 GB/s expected for H200x1x2'
    assert_line 'PASS node4+node1: busbw 40.00 GB/s at 8 GiB >= 30 GB/s expected for H200x1x2'
    assert_line 'node3 failed in every group it was in, and every group without it passed'
    local reason='slurm-jail-health: nccl-fabric: busbw GB/s in its groups: node3+node4 5.00, node2+node3 5.00; the 2 group(s) without it passed (lowest 40.00); pairs need 30 (H200x1x2)'
    assert_equal "$(drained_nodes)" "node3|drained|$reason"
    # The same figures for Prometheus: the run, every group, the culprit.
    local labels='model="H200",gpus="1"'
    run cat "$JAIL$METRICS"
    assert_line "slurm_jail_nccl_fabric_ok{$labels,nodes=\"4\"} 0"
    assert_line "slurm_jail_nccl_fabric_group_ok{group=\"node1+node2+node3+node4\",size=\"4\",$labels} 0"
    assert_line "slurm_jail_nccl_fabric_group_ok{group=\"node1+node2\",size=\"2\",$labels} 1"
    assert_line "slurm_jail_nccl_fabric_group_ok{group=\"node2+node3\",size=\"2\",$labels} 0"
    assert_line "slurm_jail_nccl_fabric_group_busbw_gbps{group=\"node3+node4\",size=\"2\",$labels} 5"
    assert_line "slurm_jail_nccl_fabric_group_busbw_gbps{group=\"node4+node1\",size=\"2\",$labels} 40"
    assert_line "slurm_jail_nccl_fabric_threshold_gbps{size=\"2\",$labels} 30"
    assert_line 'slurm_jail_nccl_fabric_node_blamed{node="node3"} 1'
    assert_line 'slurm_jail_nccl_fabric_node_blamed{node="node1"} 0'
    mkdir -p "$BATS_FILE_TMPDIR/textfile"
    cp "$JAIL$METRICS" "$BATS_FILE_TMPDIR/textfile/"
}

# fabric_queries: every query of the dashboard that names a metric of the
# multi-node check, its node variable at "All", one line each: PANEL<TAB>REFID<TAB>EXPR.
fabric_queries() {
    jq -r '[.panels[] | if .type == "row" then .panels[] else . end] | .[] | .title as $t
        | .targets[] | select(.expr | test("slurm_jail_nccl_fabric_"))
        | [$t, .refId, (.expr | gsub("\\$node\\b"; ".*"))] | @tsv' "$DASHBOARD"
}

# fabric_series PANEL REFID: each series that query gives, sorted, as its
# labels (but job and instance) name=value in name order, then the value.
fabric_series() {
    local expr
    expr=$(fabric_queries | awk -F '\t' -v p="$1" -v r="$2" '$1 == p && $2 == r { print $3 }')
    [ -n "$expr" ] || fail "the dashboard has no query $2 in a panel '$1'"
    prom_instant "$expr" | jq -r '.data.result[]
        | [(.metric | del(.__name__, .job, .instance) | to_entries | sort_by(.key)[] | "\(.key)=\(.value)"), .value[1]]
        | join(" ")' | sort
}

@test "the dashboard's multi-node row over a real Prometheus: the slow node's run, its groups, its culprit" {
    [ -f "$BATS_FILE_TMPDIR/textfile/slurm_jail_nccl_fabric.prom" ] ||
        fail "no metrics file: the one-slow-node test above writes it"
    prom_start "$BATS_FILE_TMPDIR/textfile" "$BATS_FILE_TMPDIR/prometheus"
    prom_wait_until 'count_over_time(slurm_jail_nccl_fabric_ok[1m]) >= 1' ||
        fail "prometheus did not scrape the metrics file"
    local panel ref expr count=0 answer
    while IFS=$'\t' read -r panel ref expr; do
        count=$((count + 1))
        answer=$(prom_instant "$expr" | jq -r 'if .status == "success" then "success \(.data.result | length)" else "error \(.error)" end')
        [[ $answer == success\ [1-9]* ]] || fail "$panel $ref: $answer: $expr"
    done < <(fabric_queries)
    [ "$count" -ge 5 ] || fail "only $count queries of the multi-node check in the dashboard"
    run fabric_series 'Multi-node runs' A
    assert_output 'gpus=1 model=H200 nodes=4 0'
    local g groups=()
    for g in 'node1+node2+node3+node4 size=4 0' 'node1+node2 size=2 1' 'node3+node4 size=2 0' \
        'node2+node3 size=2 0' 'node4+node1 size=2 1'; do
        groups+=("gpus=1 group=${g%% *} model=H200 ${g#* }")
    done
    run fabric_series 'Multi-node groups' A
    assert_output "$(printf '%s\n' "${groups[@]}" | sort)"
    run fabric_series 'Multi-node groups' C
    assert_line 'gpus=1 group=node3+node4 model=H200 size=2 30'
    run fabric_series 'Nodes the pairs blamed' A
    assert_output 'node=node3 1'
}

@test "two slow nodes that every pair holds: no single node explains it, nobody is drained" {
    mark node1
    mark node3
    run fabric --metrics-file "$METRICS"
    assert_success
    assert_line 'FAIL node1+node2+node3+node4: busbw 5.00 GB/s at 8 GiB < 30 GB/s expected for H200x1x2'
    assert_line '4 of 4 groups failed (node1+node2, node3+node4, node2+node3, node4+node1): no single node explains that; nobody is drained'
    assert_equal "$(drained_nodes)" ''
}

@test "the drain cap: a culprit beyond --max-drain-fraction is named, not drained" {
    mark node2
    run fabric --max-drain-fraction 0.2
    assert_success
    assert_line 'node2 failed in every group it was in, and every group without it passed'
    assert_line --partial 'not draining node2: a run of 4 nodes may drain at most 0 (--max-drain-fraction 0.2); evidence: busbw GB/s in its groups: node1+node2 5.00, node2+node3 5.00'
    assert_equal "$(drained_nodes)" ''
}

# A node drained while the job holds it (DRAINING) is still tested: after a
# pass the check resumes the one it drained itself, and leaves the admin's.
@test "after a pass: our own drain is resumed, an admin's drain is left alone" {
    local check="exec /usr/sbin/slurm-jail-nccl-fabric --gpu-model H200 --gpus 1 --binary $ARP"
    check+=" --threshold H200x1x2=30 ${MPI_ENV[*]}"
    run on_node node1 sbatch --exclusive -N4 --chdir=/ --output=/root/fabric-%j.out --time=2 \
        --wrap "sleep 3; $check"
    assert_success
    local job=${output##* }
    wait_until 20 node_job_running "$job"
    ctld_exec scontrol update nodename=node2 state=drain reason='slurm-jail-health: nccl-fabric: an earlier run'
    ctld_exec scontrol update nodename=node4 state=drain reason='cable swap'
    wait_until 60 no_jobs
    run cat "$JAIL"/root/fabric-*.out
    assert_line --partial 'PASS node1+node2+node3+node4: busbw 40.00 GB/s'
    assert_line "node2: check passed; resuming (drained by us: 'slurm-jail-health: nccl-fabric: an earlier run')"
    assert_line "node4: check passed, but the node was drained by someone else ('cable swap'); leaving it drained"
    assert_equal "$(drained_nodes)" 'node4|drained|cable swap'
}
