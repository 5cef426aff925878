# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# A real Prometheus (Debian's prometheus) scraping metrics files through a
# real node_exporter's textfile collector (Debian's prometheus-node-exporter),
# on free ports of 127.0.0.1, for the tests that run the dashboard's queries
# over what the health checks wrote.
#
#   prom_start TEXTFILE_DIR WORK_DIR   start both, scraping every second; sets PROM_URL
#   prom_wait_until EXPR               until the query EXPR gives a series (30 s at most)
#   prom_instant EXPR                  Prometheus' JSON answer to an instant query
#   prom_stop WORK_DIR                 stop both (the test file's teardown_file)

# free_port FROM: the first port from FROM on that nothing listens on.
free_port() {
    local port=$1
    while ss -Hltn "sport = :$port" | grep -q .; do
        port=$((port + 1))
    done
    echo "$port"
}

prom_start() {
    local textfile=$1 work=$2 exporter_port prometheus_port
    mkdir -p "$work"
    exporter_port=$(free_port 17900)
    prometheus-node-exporter --web.listen-address="127.0.0.1:$exporter_port" --collector.disable-defaults \
        --collector.textfile --collector.textfile.directory="$textfile" >"$work/exporter.log" 2>&1 3>&- &
    echo $! >"$work/exporter.pid"
    prometheus_port=$(free_port $((exporter_port + 1)))
    cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$exporter_port']
YAML
    prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
        --web.listen-address="127.0.0.1:$prometheus_port" >"$work/prometheus.log" 2>&1 3>&- &
    echo $! >"$work/prometheus.pid"
    export PROM_URL=http://127.0.0.1:$prometheus_port PROM_WORK=$work
}

prom_instant() {
    curl -sS "$PROM_URL/api/v1/query" --data-urlencode "query=$1"
}

prom_wait_until() {
    local n
    for _ in $(seq 150); do
        n=$(prom_instant "$1" 2>/dev/null | jq -r '.data.result | length' 2>/dev/null) || n=0
        [ "${n:-0}" -ge 1 ] && return 0
        sleep 0.2
    done
    echo "prometheus has given no series for '$1' in 30 s: $(tail -5 "$PROM_WORK/prometheus.log" "$PROM_WORK/exporter.log")" >&2
    return 1
}

# prom_stop WORK_DIR: each process ended (a zombie waiting for its parent counts).
prom_stop() {
    local f pid
    for f in "$1"/exporter.pid "$1"/prometheus.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true # when this shell started it
        for _ in $(seq 50); do prom_process_ended "$pid" && break; sleep 0.1; done
        prom_process_ended "$pid" || kill -9 "$pid" 2>/dev/null || true
        rm -f "$f"
    done
}

prom_process_ended() {
    local state
    state=$(ps -o stat= -p "$1") || return 0
    [[ $state == Z* ]]
}
