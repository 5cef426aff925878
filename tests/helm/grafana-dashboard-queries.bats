#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns
# Every query of the chart's Grafana dashboard against a real Prometheus that
# scraped real health-check output: the real slurm-jail-gpu-check (fake NVML,
# sysfs trees laid out as the kernel does, DCGM level 3 through the fake dcgmi
# of the health tests, which prints recorded `dcgmi diag -j` outputs) and the
# real slurm-jail-nccl-check (the fake all_reduce_perf of the health tests,
# which replays recorded runs) write the metrics files of three nodes,
# Debian's prometheus-node-exporter serves them through its textfile
# collector, and Debian's prometheus scrapes it every second.
#   n1: 8 healthy H100s, two InfiniBand ports up at NDR, DCGM passes;
#   n2: GPU 3 with an inactive NVLink, port mlx5_1/1 down, DCGM's diagnostic
#       test fails on GPU 3: to be drained;
#   n3: 8 healthy H100s, no InfiniBand, nv-hostengine down: DCGM gives no
#       verdict, a warning.
# The NCCL runs replay the recorded healthy and P2P-disabled runs of one
# A100 x4 machine (threshold 200 GB/s): n1 passes at 234.74 GB/s, n2 fails at
# 5.2 GB/s; n3 has none.
# The multi-node row's metrics need a Slurm job across nodes: here its
# queries need only be valid; tests/e2e/38-nccl-fabric.bats runs them over a
# real slurm-jail-nccl-fabric run on the local cluster.

load helpers
load ../health/fake_dcgmi
# shellcheck source=tests/lib/prometheus.bash
. "$BATS_TEST_DIRNAME/../lib/prometheus.bash"

setup_file() {
    require_helm_tools "$root" kubernetes-models
    export R=$BATS_FILE_TMPDIR
    local build=${SLURM_JAIL_BUILD_DIR:-$root/build}
    export GPU_CHECK=$build/health/slurm-jail-gpu-check FAKE_NVML=$build/tests/health/fake-nvml/libnvidia-ml.so.1
    export NCCL_CHECK=$build/health/slurm-jail-nccl-check
    need_built slurm-jail-gpu-check "$GPU_CHECK"
    need_built slurm-jail-nccl-check "$NCCL_CHECK"
    need_built fake_nvml "$FAKE_NVML"

    render_validated "$R/on.json" --set healthChecks.grafanaDashboard.enabled=true
    cm_data "$R/on.json" t-slurm-cluster-health-dashboard slurm-jail-health.json >"$R/dashboard.json"
    node "$chart/hack/health-dashboard.js" --metrics >"$R/metrics.json"

    write_node_metrics
    prom_start "$R/textfile" "$R/prometheus"
    wait_for_two_scrapes
}

teardown_file() {
    prom_stop "$R/prometheus"
}

# port SYSFS HCA N STATE PHYS_STATE RATE: one port, as the kernel lays it out.
port() {
    local d=$1/class/infiniband/$2/ports/$3
    mkdir -p "$d/counters"
    echo "$4" >"$d/state"
    echo "$5" >"$d/phys_state"
    echo "$6" >"$d/rate"
    echo InfiniBand >"$d/link_layer"
    echo 0 >"$d/counters/link_downed"
    echo 0 >"$d/counters/symbol_error"
}

# run_gpu_check NODE DCGM_OUTPUT DCGMI_EXIT [ARGS...]: the quick check of NODE
# with DCGM level 3, its dcgmi a fake that prints DCGM_OUTPUT (a file of
# tests/health/fixtures/dcgm) and exits with DCGMI_EXIT; what it printed in
# $R/check-NODE.out.
run_gpu_check() {
    local n=$1 dcgmi
    dcgmi=$(write_fake_dcgmi "$R/dcgm-$n" "$R/dcgmi-$n.args" "$root/tests/health/fixtures/dcgm/$2" "$3")
    mkdir -p "$R/state-$n" "$R/sys-$n"
    "$GPU_CHECK" --config /dev/null --nvml-library "$FAKE_NVML" --no-drain --node "$n" --expected-gpus 8 \
        --kernel-log "$R/kmsg" --sysfs-root "$R/sys-$n" --state-dir "$R/state-$n" \
        --dcgm-level 3 --dcgmi "$dcgmi" "${@:4}" \
        --metrics-file "$R/textfile/slurm_jail_gpu_$n.prom" >"$R/check-$n.out" || true
}

# run_nccl_check NODE RECORDING: the NCCL check of NODE, an A100 x4, its
# all_reduce_perf the fake that replays RECORDING (../shared/fixtures/nccl);
# what it printed in $R/nccl-NODE.out.
run_nccl_check() {
    "$NCCL_CHECK" --config /dev/null --binary "$root/tests/health/fake_all_reduce_perf" \
        --env "FAKE_NCCL_FIXTURE=$root/../shared/fixtures/nccl/$2" --no-drain --node "$1" \
        --gpu-model 'NVIDIA A100-SXM4-80GB' --gpus 4 \
        --metrics-file "$R/textfile/slurm_jail_nccl_$1.prom" >"$R/nccl-$1.out" || true
}

# expect_line NODE FILE REGEX: what a check of NODE printed went as planned.
expect_line() {
    grep -Eq "$3" "$R/$2" || fail "$1's check did not go as planned (no line '$3'): $(cat "$R/$2")"
}

write_node_metrics() {
    local up=("4: ACTIVE" "5: LinkUp" "400 Gb/sec (4X NDR)") ports=(--ib-ports "mlx5_0/1,mlx5_1/1")
    port "$R/sys-n1" mlx5_0 1 "${up[@]}"
    port "$R/sys-n1" mlx5_1 1 "${up[@]}"
    port "$R/sys-n2" mlx5_0 1 "${up[@]}"
    port "$R/sys-n2" mlx5_1 1 "1: DOWN" "3: Disabled" "10 Gb/sec (4X SDR)"
    mkdir -p "$R/textfile"
    : >"$R/kmsg"
    export FAKE_NVML_CSV=$root/../shared/fixtures/nvidia-smi/02_h100_sxm_query-gpu_csv_idle.txt
    run_gpu_check n1 derived_dcgm4_r3_pass_8gpu.json 0 "${ports[@]}"
    # dcgmi exits 226 when a test fails (dcgm4_r1_gb10_software_fail.json's run)
    FAKE_NVML_FAULT=nvlink FAKE_NVML_FAULT_GPU=3 run_gpu_check n2 derived_dcgm4_r3_fail_gpu3.json 226 "${ports[@]}"
    run_gpu_check n3 dcgmi_no_hostengine.txt 235
    expect_line n1 check-n1.out '^OK n1'
    expect_line n2 check-n2.out '^DRAIN IB port mlx5_1/1'
    expect_line n2 check-n2.out '^DRAIN dcgm: diagnostic gpu 3: fail($|:)'
    expect_line n3 check-n3.out '^WARN dcgm: nv-hostengine is not reachable'
    run_nccl_check n1 04_healthy_4gpu_nvswitch_a100.txt
    run_nccl_check n2 05_low_bw_4gpu_nvswitch_p2p_disabled_a100.txt
    expect_line n1 nccl-n1.out '^PASS n1'
    expect_line n2 nccl-n2.out '^FAIL n2: busbw 5.20 GB/s'
}

# instant EXPR: Prometheus' JSON answer to an instant query.
instant() { prom_instant "$1"; }

# Two samples of every node: increase() and the like need two. All files are
# in place before node_exporter starts, so each scrape has them all.
wait_for_two_scrapes() {
    prom_wait_until 'min(count_over_time(slurm_jail_gpu_check_drain[1m])) >= 2 and count(slurm_jail_gpu_check_drain) == 3' ||
        fail "prometheus has not scraped the three nodes twice"
}

# queries [NODE_REGEX]: every query of the dashboard, its variables substituted
# as Grafana does (node: the regex, "All" = its allValue; the others: their
# current value), one JSON object per line: {panel, refId, expr, range}.
queries() {
    jq -c --arg node "${1:-}" '
        ([.templating.list[] | select(.type != "datasource")
          | {key: .name, value: (if .name == "node" and $node != "" then $node
                                 elif .current.value == "$__all" then .allValue else .current.value end)}]
         | from_entries) as $vars
        | [.panels[] | if .type == "row" then .panels[] else . end]
        | .[] | .title as $panel | .targets[]
        | {panel: $panel, refId, range,
           expr: (reduce ($vars | to_entries[]) as $v (.expr; gsub("\\$" + $v.key + "\\b"; $v.value)))}' \
        "$R/dashboard.json"
}

# query_of TITLE [NODE_REGEX] [REFID]: the query REFID (default A) of the panel.
query_of() {
    local e
    e=$(queries "${2:-}" | jq -r --arg t "$1" --arg r "${3:-A}" 'select(.panel == $t and .refId == $r) | .expr')
    [ -n "$e" ] || fail "no panel '$1' with a query ${3:-A}"
    echo "$e"
}

# value TITLE [NODE_REGEX] [REFID]: the single value the panel's query gives now.
value() {
    local e
    e=$(query_of "$@") || return
    instant "$e" | jq -r --arg e "$e" '.data.result | if length == 1 then .[0].value[1] else "\(length) series: \($e)" end'
}

# series TITLE [NODE_REGEX] [REFID]: each series the panel's query gives now,
# one line each, sorted: its labels (but job and instance) as name=value in
# name order, then the value.
series() {
    local e
    e=$(query_of "$@") || return
    instant "$e" | jq -r '.data.result[]
        | [(.metric | del(.__name__, .job, .instance) | to_entries | sort_by(.key)[] | "\(.key)=\(.value)"), .value[1]]
        | join(" ")' | sort
}

@test "every query is valid PromQL, and each over today's one-node metrics returns series, instant and over a range" {
    local today fabric expected panel ref range expr answer errors=() end count=0
    today=$(jq -r '.today | join("|")' "$R/metrics.json")
    fabric=$(jq -r '.fabric | join("|")' "$R/metrics.json")
    expected=$(jq -r '.expected | join("|")' "$R/metrics.json")
    end=$(date +%s)
    while IFS=$'\t' read -r panel ref range expr; do
        count=$((count + 1))
        panel="$panel $ref"
        [[ $expr != *'$'* ]] || { errors+=("$panel: a variable left unsubstituted: $expr"); continue; }
        # "success N" or "error MESSAGE"
        answer=$(instant "$expr" | jq -r 'if .status == "success" then "success \(.data.result | length)" else "error \(.error)" end')
        case $answer in
            "success 0")
                # valid is all an expected metric's query can be until a program writes it;
                # the multi-node check's are scraped in tests/e2e/38-nccl-fabric.bats
                [[ (-n $expected && $expr =~ $expected) || $expr =~ $fabric ]] || errors+=("$panel: no series: $expr")
                ;;
            success*) ;;
            *) errors+=("$panel: $answer: $expr") ;;
        esac
        [[ $expr =~ $today|$fabric${expected:+|$expected} ]] || errors+=("$panel: names no metric of the source's lists: $expr")
        [ "$range" = true ] || continue
        answer=$(curl -sS "$PROM_URL/api/v1/query_range" --data-urlencode "query=$expr" \
            --data-urlencode "start=$((end - 60))" --data-urlencode "end=$end" --data-urlencode step=5 | jq -r .status)
        [ "$answer" = success ] || errors+=("$panel (range): $answer: $expr")
    done < <(queries | jq -r '[.panel, .refId, .range, .expr] | @tsv')
    [ "$count" -ge 20 ] || fail "only $count queries found in the dashboard"
    [ ${#errors[@]} -eq 0 ] || fail "$(printf '%s\n' "${errors[@]}")"
}

@test "the overview counts what the checks found: 3 nodes, 1 to drain, 4 problems, 1 port down" {
    run value "Nodes reporting"
    assert_output 3
    run value "Nodes to drain"
    assert_output 1
    run value "Checks with a problem" # n2: nvlink on GPU 3, ib_port and dcgm node-wide; n3: dcgm (a warning)
    assert_output 4
    run value "IB ports down"
    assert_output 1
    run series "Nodes with a problem, by check"
    assert_output $'check=dcgm 2\ncheck=ib_port 1\ncheck=nvlink 1'
    run value "Stale nodes" # both ran seconds ago
    assert_output 0
    # picking node n1 in the node variable: nothing to drain there
    run value "Nodes to drain" n1
    assert_output 0
    run value "Nodes reporting" 'n1|n2'
    assert_output 2
}

@test "the verdict matrix: GPU 3 and the node-wide checks of n2 and n3 have a problem, all of n1 passes" {
    local expr answer
    expr=$(query_of "Verdict by node and GPU")
    answer=$(instant "$expr")
    run jq -r '.data.result[] | select(.value[1] == "0") | "\(.metric.node) \(.metric.gpu)"' <<<"$answer"
    assert_output $'n2 3\nn2 node\nn3 node' # n2: nvlink, ib_port, dcgm; n3: dcgm
    run jq '.data.result | length' <<<"$answer"
    assert_output 27 # 3 nodes x (8 GPUs + node)
}

@test "the node variable's label_values query lists the three nodes" {
    local q metric label
    q=$(jq -r '.templating.list[] | select(.name == "node") | .query.query' "$R/dashboard.json")
    [[ $q =~ ^label_values\(([a-z_]+),\ *([a-z_]+)\)$ ]] || fail "unexpected variable query: $q"
    metric=${BASH_REMATCH[1]} label=${BASH_REMATCH[2]}
    run curl -sS "$PROM_URL/api/v1/label/$label/values" --data-urlencode "match[]=$metric" -G
    assert_success
    jq -e '.data == ["n1", "n2", "n3"]' <<<"$output"
}

@test "the NCCL row: n1's busbw above its threshold, n2's below; the table's verdicts and labels" {
    local labels='gpus=4 model=NVIDIA A100-SXM4-80GB' n
    run value "Bus bandwidth vs threshold" n1 A
    assert_output 234.74
    run value "Bus bandwidth vs threshold" n1 B
    assert_output 200
    run value "Bus bandwidth vs threshold" n2 A
    assert_output 5.2
    run series "Last NCCL verdicts" "" A
    assert_output "$labels node=n1 nodes=1 1"$'\n'"$labels node=n2 nodes=1 0"
    run series "Last NCCL verdicts" "" B
    assert_output "$labels node=n1 nodes=1 234.74"$'\n'"$labels node=n2 nodes=1 5.2"
    run series "Last NCCL verdicts" "" C
    assert_output "$labels node=n1 nodes=1 200"$'\n'"$labels node=n2 nodes=1 200"
    # age: both ran seconds ago
    for n in n1 n2; do
        run value "Last NCCL verdicts" "$n" D
        [[ $output =~ ^[0-9]+(\.[0-9]+)?$ ]] && [ "${output%.*}" -lt 60 ] || fail "$n's age is not seconds: $output"
    done
    # n3 ran none
    run value "Bus bandwidth vs threshold" n3 A
    assert_output "0 series: $(query_of "Bus bandwidth vs threshold" n3)"
}

@test "the DCGM row: the diagnostic fails on exactly n2's GPU 3, n1 passes, n3's run gave no results" {
    run series "DCGM verdict by node and test" # worst per node and test: 3 fail, 0 pass
    assert_output $'node=n1 test=diagnostic 0\nnode=n2 test=diagnostic 3'
    run series "DCGM results that did not pass"
    assert_output 'gpu=3 node=n2 test=diagnostic 0'
    run series "DCGM results that did not pass" n1
    assert_output ''
    run series "DCGM runs without results"
    assert_output 'node=n3 outcome=no_hostengine 1'
}

@test "today's metrics are all in the scraped output; no expected one is written yet" {
    local names m
    names=$(curl -sS "$PROM_URL/api/v1/label/__name__/values" | jq -r '.data[]')
    for m in $(jq -r '.today[]' "$R/metrics.json"); do
        grep -qx "$m" <<<"$names" || fail "$m is not written by the health checks (renamed?)"
    done
    for m in $(jq -r '.expected[]' "$R/metrics.json"); do
        ! grep -qx "$m" <<<"$names" ||
            fail "$m is written now: move it to TODAY in hack/health-dashboard.js and assert its panels here"
    done
}
