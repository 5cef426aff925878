#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR disable=SC2154,SC2016 # variables come from helpers.bash (bats `load`); single-quoted $ are literal patterns
# Every query of the chart's Grafana dashboard against a real Prometheus that
# scraped real health-check output: the real slurm-jail-gpu-check (fake NVML,
# sysfs trees laid out as the kernel does) writes the metrics files of two
# nodes, Debian's prometheus-node-exporter serves them through its textfile
# collector, and Debian's prometheus scrapes it every second.
#   n1: 8 healthy H100s, two InfiniBand ports up at NDR;
#   n2: GPU 3 with an inactive NVLink, port mlx5_1/1 down: to be drained.

load helpers

# Private ports (the health suite's cluster uses 17817/17818).
exporter_port=17851
prometheus_port=17852

setup_file() {
    require_tools
    export R=$BATS_FILE_TMPDIR
    local build=${SLURM_JAIL_BUILD_DIR:-$root/build}
    export GPU_CHECK=$build/health/slurm-jail-gpu-check FAKE_NVML=$build/tests/health/fake-nvml/libnvidia-ml.so.1
    need_built slurm-jail-gpu-check "$GPU_CHECK"
    need_built fake_nvml "$FAKE_NVML"
    for port in "$exporter_port" "$prometheus_port"; do
        ! ss -Hltn "sport = :$port" | grep -q . ||
            fail "port $port is in use: this test needs it for its own node_exporter and prometheus"
    done

    render "$R/on.json" --set healthChecks.grafanaDashboard.enabled=true
    cm_data "$R/on.json" t-slurm-cluster-health-dashboard slurm-jail-health.json >"$R/dashboard.json"
    node "$chart/hack/health-dashboard.js" --metrics >"$R/metrics.json"

    write_node_metrics
    start_exporter_and_prometheus
    wait_for_two_scrapes
}

teardown_file() {
    local f pid
    for f in "${R:?}"/*.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true # when this shell started it
        for _ in $(seq 50); do stopped "$pid" && break; sleep 0.1; done
        stopped "$pid" || kill -9 "$pid" 2>/dev/null || true
        rm -f "$f"
    done
}

# stopped PID: the process is gone, or a zombie that only waits for its parent.
stopped() {
    local state
    state=$(ps -o stat= -p "$1") || return 0
    [[ $state == Z* ]]
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

write_node_metrics() {
    local up=("4: ACTIVE" "5: LinkUp" "400 Gb/sec (4X NDR)") n
    port "$R/sys-n1" mlx5_0 1 "${up[@]}"
    port "$R/sys-n1" mlx5_1 1 "${up[@]}"
    port "$R/sys-n2" mlx5_0 1 "${up[@]}"
    port "$R/sys-n2" mlx5_1 1 "1: DOWN" "3: Disabled" "10 Gb/sec (4X SDR)"
    mkdir -p "$R/textfile"
    : >"$R/kmsg"
    export FAKE_NVML_CSV=$root/../shared/fixtures/nvidia-smi/02_h100_sxm_query-gpu_csv_idle.txt
    for n in n1 n2; do
        mkdir -p "$R/state-$n"
        [ "$n" = n1 ] || export FAKE_NVML_FAULT=nvlink FAKE_NVML_FAULT_GPU=3
        "$GPU_CHECK" --config /dev/null --nvml-library "$FAKE_NVML" --no-drain --node "$n" --expected-gpus 8 \
            --kernel-log "$R/kmsg" --sysfs-root "$R/sys-$n" --ib-ports mlx5_0/1,mlx5_1/1 \
            --state-dir "$R/state-$n" --metrics-file "$R/textfile/slurm_jail_gpu_$n.prom" >"$R/check-$n.out" || true
    done
    grep -q '^DRAIN IB port mlx5_1/1' "$R/check-n2.out" || fail "n2's check did not fail as planned: $(cat "$R/check-n2.out")"
    grep -q '^OK n1' "$R/check-n1.out" || fail "n1's check did not pass: $(cat "$R/check-n1.out")"
}

start_exporter_and_prometheus() {
    prometheus-node-exporter --web.listen-address="127.0.0.1:$exporter_port" --collector.disable-defaults \
        --collector.textfile --collector.textfile.directory="$R/textfile" >"$R/exporter.log" 2>&1 3>&- &
    echo $! >"$R/exporter.pid"
    cat >"$R/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$exporter_port']
EOF
    prometheus --config.file="$R/prometheus.yml" --storage.tsdb.path="$R/tsdb" \
        --web.listen-address="127.0.0.1:$prometheus_port" >"$R/prometheus.log" 2>&1 3>&- &
    echo $! >"$R/prometheus.pid"
}

# instant EXPR: Prometheus' JSON answer to an instant query.
instant() {
    curl -sS "http://127.0.0.1:$prometheus_port/api/v1/query" --data-urlencode "query=$1"
}

# Two samples of both nodes: increase() and the like need two.
wait_for_two_scrapes() {
    local n
    for _ in $(seq 150); do
        n=$(instant 'min(count_over_time(slurm_jail_gpu_check_drain[1m])) and count(slurm_jail_gpu_check_drain) == 2' 2>/dev/null |
            jq -r '.data.result[0].value[1] // 0' 2>/dev/null) || n=0
        [ "${n:-0}" -ge 2 ] && return 0
        sleep 0.2
    done
    fail "prometheus has not scraped both nodes twice in 30 s: $(tail -5 "$R/prometheus.log" "$R/exporter.log")"
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

# value TITLE [NODE_REGEX]: the single value the panel's query A gives now.
value() {
    local expr
    expr=$(queries "${2:-}" | jq -r --arg t "$1" 'select(.panel == $t and .refId == "A") | .expr')
    [ -n "$expr" ] || fail "no panel '$1'"
    instant "$expr" | jq -r --arg e "$expr" '.data.result | if length == 1 then .[0].value[1] else "\(length) series: \($e)" end'
}

@test "every query is valid PromQL, and each over today's metrics returns series, instant and over a range" {
    local today expected panel ref range expr answer errors=() end count=0
    today=$(jq -r '.today | join("|")' "$R/metrics.json")
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
                # valid is all an expected metric's query can be until a program writes it
                [[ $expr =~ $expected ]] || errors+=("$panel: no series: $expr")
                ;;
            success*) ;;
            *) errors+=("$panel: $answer: $expr") ;;
        esac
        [[ $expr =~ $today|$expected ]] || errors+=("$panel: names no metric of the source's lists: $expr")
        [ "$range" = true ] || continue
        answer=$(curl -sS "http://127.0.0.1:$prometheus_port/api/v1/query_range" --data-urlencode "query=$expr" \
            --data-urlencode "start=$((end - 60))" --data-urlencode "end=$end" --data-urlencode step=5 | jq -r .status)
        [ "$answer" = success ] || errors+=("$panel (range): $answer: $expr")
    done < <(queries | jq -r '[.panel, .refId, .range, .expr] | @tsv')
    [ "$count" -ge 20 ] || fail "only $count queries found in the dashboard"
    [ ${#errors[@]} -eq 0 ] || fail "$(printf '%s\n' "${errors[@]}")"
}

@test "the overview counts what the checks found: 2 nodes, 1 to drain, 2 problems, 1 port down" {
    run value "Nodes reporting"
    assert_output 2
    run value "Nodes to drain"
    assert_output 1
    run value "Checks with a problem" # n2: nvlink on GPU 3, ib_port node-wide
    assert_output 2
    run value "IB ports down"
    assert_output 1
    run value "Stale nodes" # both ran seconds ago
    assert_output 0
    # picking node n1 in the node variable: nothing to drain there
    run value "Nodes to drain" n1
    assert_output 0
    run value "Nodes reporting" 'n1|n2'
    assert_output 2
}

@test "the verdict matrix: GPU 3 and the node-wide checks of n2 fail, all of n1 passes" {
    local expr answer
    expr=$(queries | jq -r 'select(.panel == "Verdict by node and GPU") | .expr')
    answer=$(instant "$expr")
    run jq -r '.data.result[] | select(.value[1] == "0") | "\(.metric.node) \(.metric.gpu)"' <<<"$answer"
    assert_output $'n2 3\nn2 node'
    run jq '.data.result | length' <<<"$answer"
    assert_output 18 # 2 nodes x (8 GPUs + node)
}

@test "the node variable's label_values query lists both nodes" {
    local q metric label
    q=$(jq -r '.templating.list[] | select(.name == "node") | .query.query' "$R/dashboard.json")
    [[ $q =~ ^label_values\(([a-z_]+),\ *([a-z_]+)\)$ ]] || fail "unexpected variable query: $q"
    metric=${BASH_REMATCH[1]} label=${BASH_REMATCH[2]}
    run curl -sS "http://127.0.0.1:$prometheus_port/api/v1/label/$label/values" --data-urlencode "match[]=$metric" -G
    assert_success
    jq -e '.data == ["n1", "n2"]' <<<"$output"
}

@test "today's metrics are all in the scraped output; no expected one is written yet" {
    local names m
    names=$(curl -sS "http://127.0.0.1:$prometheus_port/api/v1/label/__name__/values" | jq -r '.data[]')
    for m in $(jq -r '.today[]' "$R/metrics.json"); do
        grep -qx "$m" <<<"$names" || fail "$m is not written by slurm-jail-gpu-check (renamed?)"
    done
    for m in $(jq -r '.expected[]' "$R/metrics.json"); do
        ! grep -qx "$m" <<<"$names" ||
            fail "$m is written now: move it to TODAY in hack/health-dashboard.js and assert its panels here"
    done
}
