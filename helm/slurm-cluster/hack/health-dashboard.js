#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The one source of the chart's Grafana dashboard of the health checks
// (files/dashboards/slurm-jail-health.json, shipped by
// templates/health/grafana-dashboard.yaml). Edit this file, never the JSON.
//
//   node hack/health-dashboard.js            rewrite the JSON
//   node hack/health-dashboard.js --check    exit 1 if the JSON is out of date
//   node hack/health-dashboard.js --metrics  print {"today": [...], "fabric": [...],
//                                            "expected": [...]}: the metric names
//                                            the queries use
//
// tests/helm/grafana-dashboard.bats checks the JSON against Grafana's own
// schema (@grafana/schema); tests/helm/grafana-dashboard-queries.bats runs
// every query against a real Prometheus that scraped the metrics files of the
// real slurm-jail-gpu-check (with DCGM) and slurm-jail-nccl-check;
// tests/e2e/38-nccl-fabric.bats runs the multi-node row's queries over the
// metrics of a real slurm-jail-nccl-fabric run on the local cluster.
'use strict';
const fs = require('fs');
const path = require('path');

const out = path.join(__dirname, '..', 'files', 'dashboards', 'slurm-jail-health.json');

// ---------------------------------------------------------------------------
// Metric names the health programs write today (health/README.md's metrics
// table; the code that writes them is health/src/report.cpp,
// dcgm_verdict.cpp and nccl_metrics.cpp).
const GPU = 'slurm_jail_gpu_check_';
const NCCL = 'slurm_jail_nccl_check_';
const TODAY = {
  ok: `${GPU}ok`, // {node,check,gpu}: 1 = no problem (gpu="node" for node-wide checks)
  drain: `${GPU}drain`, // {node}: 1 = the quick check wants the node drained
  duration: `${GPU}duration_seconds`, // {node}
  lastRun: `${GPU}last_run_timestamp_seconds`, // {node}
  ibUp: `${GPU}ib_port_up`, // {node,port,link_layer}: ACTIVE and LinkUp
  ibRate: `${GPU}ib_port_rate_gbps`, // {node,port,link_layer}
  ibLinkDowned: `${GPU}ib_port_link_downed`, // {node,port,link_layer}: counter value
  ibSymbolError: `${GPU}ib_port_symbol_error`, // {node,port,link_layer}: counter value
  // slurm-jail-gpu-check --dcgm-level: only on nodes where DCGM ran
  dcgmResult: `${GPU}dcgm_result`, // {node,test,gpu}: DCGM_RESULT values below
  dcgmOutcome: `${GPU}dcgm_outcome`, // {node,outcome}: 1 for how the dcgmi run ended ("ok": results read)
  // slurm-jail-nccl-check --metrics-file, labels {node,model,gpus,nodes}
  ncclBusbw: `${NCCL}busbw_gbps`, // busbw at the largest message size
  ncclThreshold: `${NCCL}threshold_gbps`, // the threshold it was judged against
  ncclOk: `${NCCL}ok`, // 1 pass, 0 fail
  ncclLastRun: `${NCCL}last_run_timestamp_seconds`,
};
// slurm-jail-nccl-fabric --metrics-file: one file per run, on the node of its
// job's batch step. A run needs a Slurm job across several nodes, so the
// Prometheus test of these is tests/e2e/38-nccl-fabric.bats (the local
// cluster), not tests/helm/grafana-dashboard-queries.bats.
const FAB = 'slurm_jail_nccl_fabric_';
const FABRIC = {
  fabricOk: `${FAB}ok`, // {model,gpus,nodes}: the run across all nodes, 1 pass, 0 fail
  fabricLastRun: `${FAB}last_run_timestamp_seconds`, // {model,gpus,nodes}
  fabricGroupOk: `${FAB}group_ok`, // {group,size,model,gpus}: 1 pass, 0 fail
  fabricGroupBusbw: `${FAB}group_busbw_gbps`, // {group,size,model,gpus}
  fabricThreshold: `${FAB}threshold_gbps`, // {size,model,gpus}
  fabricBlamed: `${FAB}node_blamed`, // {node}: 1 = the pairs blamed it
};
// The values of dcgmResult.
const DCGM_RESULT = { fail: 0, pass: 1, warn: 2, skipped: 3, unrecognised: 4 };

// ===========================================================================
// EXPECTED FROM OTHER BRANCHES: names not written by any program on this
// branch yet, as the branch adding them documents them (health/README.md's
// metrics table there). Put a panel over such a name in a row marked
// `collapsed: true` (it shows "No data" until the program writes it); once the
// program lands, move the name to TODAY, make its row a normal one and let the
// Prometheus test (tests/helm/grafana-dashboard-queries.bats) write it too.
// None at present.
const EXPECTED = {};
// ===========================================================================

const M = { ...TODAY, ...FABRIC, ...EXPECTED };
const DS = { type: 'prometheus', uid: '${datasource}' };
// A metric of the nodes picked in the dashboard's `node` variable.
const sel = (metric) => `${metric}{node=~"$node"}`;

// --- Panel builders: each fills in every option Grafana's types require. ----

const target = (expr, refId, { legend = '', instant = false, table = false } = {}) => ({
  datasource: DS,
  expr,
  refId,
  legendFormat: legend,
  instant,
  range: !instant,
  format: table ? 'table' : 'time_series',
});

const thresholds = (...steps) => ({
  mode: 'absolute',
  steps: [{ color: 'green', value: null }, ...steps.map(([value, color]) => ({ color, value }))],
});

// Value mappings: [[value, text, color], ...].
const mapping = (...entries) => [{
  type: 'value',
  options: Object.fromEntries(entries.map(([v, text, color], index) => [String(v), { text, color, index }])),
}];
const OK_FAIL = mapping([1, 'OK', 'green'], [0, 'FAIL', 'red']);

function panel(type, title, description, size, targets, options, fieldDefaults = {}, extra = {}) {
  return {
    type, title, description, size, datasource: DS, targets, options,
    fieldConfig: { defaults: fieldDefaults, overrides: extra.overrides || [] },
    ...(extra.transformations ? { transformations: extra.transformations } : {}),
  };
}

const reduce = { calcs: ['lastNotNull'], fields: '', values: false };

function stat(title, description, expr, { steps = [], unit = 'none', color = 'background' } = {}) {
  return panel('stat', title, description, [4, 4], [target(expr, 'A', { instant: true })], {
    colorMode: color, graphMode: 'none', justifyMode: 'auto', orientation: 'auto',
    percentChangeColorMode: 'standard', reduceOptions: reduce, showPercentChange: false,
    textMode: 'value', wideLayout: true,
  }, { unit, thresholds: thresholds(...steps), color: { mode: 'thresholds' } });
}

function bargauge(title, description, expr, legend, size) {
  return panel('bargauge', title, description, size, [target(expr, 'A', { instant: true, legend })], {
    displayMode: 'basic', legend: { calcs: [], displayMode: 'list', placement: 'bottom', showLegend: false },
    maxVizHeight: 300, minVizHeight: 16, minVizWidth: 8, namePlacement: 'auto', orientation: 'horizontal',
    reduceOptions: reduce, showUnfilled: true, sizing: 'auto', valueMode: 'color',
  }, { unit: 'none', min: 0, thresholds: thresholds([1, 'orange']), color: { mode: 'thresholds' } });
}

function timeseries(title, description, targets, size, unit, extra = {}) {
  return panel('timeseries', title, description, size, targets, {
    legend: { calcs: [], displayMode: 'list', placement: 'bottom', showLegend: true },
    tooltip: { mode: 'multi', sort: 'desc' },
  }, { unit, color: { mode: 'palette-classic' } }, extra);
}

function statusHistory(title, description, expr, legend, size, mappings) {
  return panel('status-history', title, description, size, [target(expr, 'A', { legend })], {
    legend: { calcs: [], displayMode: 'list', placement: 'bottom', showLegend: false },
    tooltip: { mode: 'single', sort: 'none' }, rowHeight: 0.9, showValue: 'never',
  }, { mappings, color: { mode: 'fixed', fixedColor: 'text' } });
}

// A table of instant queries; `columns` renames the fields it keeps, in order;
// `columnMappings` colours the named (renamed) columns by value mappings.
function table(title, description, targets, size, columns, { mappings = [], matrix = null, columnMappings = {} } = {}) {
  const transformations = [];
  if (matrix) {
    transformations.push({ id: 'groupingToMatrix', options: matrix });
  } else {
    if (targets.length > 1) transformations.push({ id: 'merge', options: {} });
    transformations.push({
      id: 'organize',
      options: {
        excludeByName: { Time: true, __name__: true, instance: true, job: true },
        indexByName: Object.fromEntries(Object.keys(columns).map((k, i) => [k, i])),
        renameByName: columns,
      },
    });
  }
  return panel('table', title, description, size, targets, { showHeader: true, frameIndex: 0, cellHeight: 'sm' }, {
    mappings,
    custom: { align: 'auto', cellOptions: { type: mappings.length ? 'color-background' : 'auto' }, inspect: false },
    thresholds: thresholds(),
    color: { mode: 'thresholds' },
  }, {
    transformations,
    overrides: Object.entries(columnMappings).map(([column, m]) => ({
      matcher: { id: 'byName', options: column },
      properties: [{ id: 'mappings', value: m }, { id: 'custom.cellOptions', value: { type: 'color-background' } }],
    })),
  });
}

const tableQuery = (expr, refId) => target(expr, refId, { instant: true, table: true });

// --- The dashboard: one entry per row. -------------------------------------

const AGE = `time() - ${sel(M.lastRun)}`;
// The worst DCGM result per node and test, ranked 3 fail, 2 warn, 1
// unrecognised, 0 pass or skipped (the results' own values do not sort so).
const dcgmIs = (v) => `(${sel(M.dcgmResult)} == bool ${v})`;
const DCGM_WORST = `max by (node, test) (3 * ${dcgmIs(DCGM_RESULT.fail)} + 2 * ${dcgmIs(DCGM_RESULT.warn)} + ${dcgmIs(DCGM_RESULT.unrecognised)})`;

const rows = [
  {
    title: 'Quick GPU check: overview',
    panels: [
      stat('Nodes reporting', 'Nodes whose slurm-jail-gpu-check wrote a metrics file.',
        `count(${sel(M.lastRun)})`, { color: 'none' }),
      stat('Nodes to drain', 'Nodes whose last quick check wants them drained (slurm_jail_gpu_check_drain).',
        `count(${sel(M.drain)} == 1) or vector(0)`, { steps: [[1, 'red']] }),
      stat('Checks with a problem', 'Check results (per node, check and GPU) that found a problem, draining or warning.',
        `count(${sel(M.ok)} == 0) or vector(0)`, { steps: [[1, 'orange']] }),
      stat('Stale nodes', 'Nodes whose quick check has not run for more than the `stale_after` variable (s).',
        `count(${AGE} > $stale_after) or vector(0)`, { steps: [[1, 'red']] }),
      stat('IB ports down', 'InfiniBand/RoCE ports that are not ACTIVE and LinkUp.',
        `count(${sel(M.ibUp)} == 0) or vector(0)`, { steps: [[1, 'red']] }),
      stat('Slowest quick check', 'The longest wall time of the last runs (budget 30 s by default; Slurm kills at 60 s).',
        `max(${sel(M.duration)})`, { unit: 's', steps: [[10, 'orange'], [30, 'red']] }),
      bargauge('Nodes with a problem, by check', 'How many nodes each check found a problem on (drain or warn).',
        `count by (check) (count by (node, check) (${sel(M.ok)} == 0))`, '{{check}}', [12, 8]),
      table('Nodes', 'The last run of each node: drain verdict, checks with a problem, age and duration.', [
        tableQuery(sel(M.drain), 'A'),
        tableQuery(`sum by (node) (1 - ${sel(M.ok)})`, 'B'),
        tableQuery(AGE, 'C'),
        tableQuery(sel(M.duration), 'D'),
      ], [12, 8], { node: 'Node', 'Value #A': 'Drain', 'Value #B': 'Problems', 'Value #C': 'Age (s)', 'Value #D': 'Duration (s)' },
      { columnMappings: { Drain: mapping([0, 'no', 'green'], [1, 'DRAIN', 'red']) } }),
    ],
  },
  {
    title: 'Quick GPU check: verdicts by node and GPU',
    panels: [
      table('Verdict by node and GPU', 'Worst result of all checks per node and GPU, a warning included (column "node": node-wide checks).',
        [tableQuery(`min by (node, gpu) (${sel(M.ok)})`, 'A')], [12, 8], {},
        { mappings: mapping([1, 'OK', 'green'], [0, 'PROBLEM', 'red']), matrix: { columnField: 'gpu', rowField: 'node', valueField: 'Value' } }),
      table('Check results with a problem', 'Every check result that is not OK in the last run.',
        [tableQuery(`${sel(M.ok)} == 0`, 'A')], [12, 8], { node: 'Node', check: 'Check', gpu: 'GPU' }),
      statusHistory('Drain verdict over time', 'slurm_jail_gpu_check_drain per node.', sel(M.drain), '{{node}}',
        [24, 8], mapping([0, 'OK', 'green'], [1, 'DRAIN', 'red'])),
    ],
  },
  {
    title: 'Quick GPU check: freshness and duration',
    panels: [
      timeseries('Time since the last run', 'Seconds since each node last ran the quick check (HealthCheckInterval plus CYCLE spreading).',
        [target(AGE, 'A', { legend: '{{node}}' })], [12, 8], 's'),
      timeseries('Quick check duration', 'Wall time of each run.',
        [target(sel(M.duration), 'A', { legend: '{{node}}' })], [12, 8], 's'),
    ],
  },
  {
    title: 'InfiniBand / RoCE ports',
    panels: [
      table('Ports', 'Each port the quick check read: up (ACTIVE and LinkUp), rate, and its error counters.', [
        tableQuery(sel(M.ibUp), 'A'),
        tableQuery(sel(M.ibRate), 'B'),
        tableQuery(sel(M.ibLinkDowned), 'C'),
        tableQuery(sel(M.ibSymbolError), 'D'),
      ], [24, 8], {
        node: 'Node', port: 'Port', link_layer: 'Link layer', 'Value #A': 'Up', 'Value #B': 'Rate (Gb/s)',
        'Value #C': 'link_downed', 'Value #D': 'symbol_error',
      }, { columnMappings: { Up: mapping([1, 'up', 'green'], [0, 'DOWN', 'red']) } }),
      statusHistory('Port up over time', 'slurm_jail_gpu_check_ib_port_up per port.', sel(M.ibUp), '{{node}} {{port}}',
        [12, 8], OK_FAIL),
      timeseries('Port rate', 'Rate of each port in Gb/s.',
        [target(sel(M.ibRate), 'A', { legend: '{{node}} {{port}}' })], [12, 8], 'Gbits'),
      timeseries('Error counter growth (1 h)', 'Growth of link_downed (drains) and symbol_error (warns) over the last hour.', [
        target(`increase(${sel(M.ibLinkDowned)}[1h])`, 'A', { legend: '{{node}} {{port}} link_downed' }),
        target(`increase(${sel(M.ibSymbolError)}[1h])`, 'B', { legend: '{{node}} {{port}} symbol_error' }),
      ], [24, 8], 'none'),
    ],
  },
  {
    title: 'NCCL bus bandwidth (slurm-jail-nccl-check)',
    panels: [
      timeseries('Bus bandwidth vs threshold', 'busbw at the largest message size of each run, and the threshold it was judged by.', [
        target(sel(M.ncclBusbw), 'A', { legend: '{{node}} busbw' }),
        target(sel(M.ncclThreshold), 'B', { legend: '{{node}} threshold' }),
      ], [12, 8], 'GBs', {
        overrides: [{
          matcher: { id: 'byFrameRefID', options: 'B' },
          properties: [{ id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } }],
        }],
      }),
      table('Last NCCL verdicts', 'The last run per node: verdict, busbw, threshold and age.', [
        tableQuery(sel(M.ncclOk), 'A'),
        tableQuery(sel(M.ncclBusbw), 'B'),
        tableQuery(sel(M.ncclThreshold), 'C'),
        tableQuery(`time() - ${sel(M.ncclLastRun)}`, 'D'),
      ], [12, 8], {
        node: 'Node', model: 'Model', gpus: 'GPUs', nodes: 'Nodes', 'Value #A': 'OK', 'Value #B': 'busbw (GB/s)',
        'Value #C': 'Threshold (GB/s)', 'Value #D': 'Age (s)',
      }, { mappings: OK_FAIL }),
    ],
  },
  {
    title: 'Multi-node NCCL (slurm-jail-nccl-fabric)',
    panels: [
      table('Multi-node runs', 'The last run across all tested nodes, per GPU model and node count: verdict and age.', [
        tableQuery(M.fabricOk, 'A'),
        tableQuery(`time() - ${M.fabricLastRun}`, 'B'),
      ], [8, 8], { model: 'Model', gpus: 'GPUs', nodes: 'Nodes', 'Value #A': 'OK', 'Value #B': 'Age (s)' },
      { columnMappings: { OK: OK_FAIL } }),
      table('Multi-node groups', 'Every group of the last run: the run across all nodes, then each pair after a failure; busbw at the largest size and the threshold for its size.', [
        tableQuery(M.fabricGroupOk, 'A'),
        tableQuery(M.fabricGroupBusbw, 'B'),
        // the threshold of each group's size, carried onto the group's labels
        tableQuery(`${M.fabricGroupOk} * 0 + on (size, model, gpus) group_left max by (size, model, gpus) (${M.fabricThreshold})`, 'C'),
      ], [10, 8], {
        group: 'Group', size: 'Nodes', model: 'Model', gpus: 'GPUs', 'Value #A': 'OK', 'Value #B': 'busbw (GB/s)',
        'Value #C': 'Threshold (GB/s)',
      },
      { columnMappings: { OK: OK_FAIL } }),
      table('Nodes the pairs blamed', 'Nodes the last multi-node run blamed: each failed in every pair it was in while every pair without it passed (drained unless the drain cap stopped it).',
        [tableQuery(`${sel(M.fabricBlamed)} == 1`, 'A')], [6, 8], { node: 'Node' }),
    ],
  },
  {
    title: 'DCGM diagnostics (slurm-jail-gpu-check --dcgm-level)',
    panels: [
      table('DCGM verdict by node and test', 'The worst result of each DCGM test over the GPUs of a node (skipped counts as a pass).',
        [tableQuery(DCGM_WORST, 'A')], [12, 8], {}, {
          mappings: mapping([0, 'pass', 'green'], [1, 'unrecognised', 'purple'], [2, 'warn', 'orange'], [3, 'FAIL', 'red']),
          matrix: { columnField: 'test', rowField: 'node', valueField: 'Value' },
        }),
      table('DCGM results that did not pass', 'Every DCGM result per test and GPU that is neither a pass nor skipped.',
        [tableQuery(`${sel(M.dcgmResult)} != ${DCGM_RESULT.pass} and ${sel(M.dcgmResult)} != ${DCGM_RESULT.skipped}`, 'A')],
        [12, 8], { node: 'Node', test: 'Test', gpu: 'GPU', Value: 'Result' },
        { mappings: mapping(...Object.entries(DCGM_RESULT).map(([text, v]) =>
          [v, text, { fail: 'red', pass: 'green', warn: 'orange', skipped: 'text', unrecognised: 'purple' }[text]])) }),
      table('DCGM runs without results', 'Nodes whose last dcgmi run gave no results, and how it ended.',
        [tableQuery(`${M.dcgmOutcome}{node=~"$node",outcome!="ok"} == 1`, 'A')], [24, 6], { node: 'Node', outcome: 'Outcome' }),
    ],
  },
];

// --- Layout: rows of 24 columns; a panel goes right of the last one or below. ---

function layout() {
  const panels = [];
  const titles = new Set();
  let id = 1;
  let y = 0;
  for (const row of rows) {
    const rowPanel = { type: 'row', title: row.title, id: id++, collapsed: !!row.collapsed, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] };
    panels.push(rowPanel);
    y += 1;
    let x = 0;
    let rowHeight = 0;
    for (const { size: [w, h], ...p } of row.panels) {
      // tests find panels by title
      if (titles.has(p.title)) throw new Error(`two panels are titled '${p.title}'`);
      titles.add(p.title);
      if (x + w > 24) { y += rowHeight; x = 0; rowHeight = 0; }
      const placed = { id: id++, gridPos: { h, w, x, y }, ...p };
      (row.collapsed ? rowPanel.panels : panels).push(placed);
      x += w;
      rowHeight = Math.max(rowHeight, h);
    }
    y += rowHeight;
  }
  return panels;
}

const dashboard = {
  uid: 'slurm-jail-health',
  title: 'Slurm jail: node health',
  description: 'Verdicts of the slurm-jail health checks (health/README.md) from their --metrics-file, through node_exporter\'s textfile collector.',
  tags: ['slurm', 'slurm-jail', 'health'],
  editable: true,
  graphTooltip: 1,
  refresh: '1m',
  schemaVersion: 39,
  time: { from: 'now-24h', to: 'now' },
  timezone: 'browser',
  annotations: { list: [] },
  links: [],
  templating: {
    list: [
      { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', hide: 0, refresh: 1, regex: '' },
      {
        name: 'node', label: 'Node', type: 'query', datasource: DS,
        query: { query: `label_values(${M.lastRun}, node)`, refId: 'PrometheusVariableQueryEditor-VariableQuery' },
        multi: true, includeAll: true, allValue: '.*', current: { text: 'All', value: '$__all' },
        refresh: 2, sort: 1, hide: 0, regex: '',
      },
      {
        name: 'stale_after', label: 'Stale after (s)', type: 'custom',
        description: 'A node whose quick check has not run for this long counts as stale (3 x the chart\'s default HealthCheckInterval of 300 s).',
        query: '600,900,1800,3600', current: { text: '900', value: '900' }, hide: 0,
        options: ['600', '900', '1800', '3600'].map((v) => ({ selected: v === '900', text: v, value: v })),
      },
    ],
  },
  panels: layout(),
};

const text = JSON.stringify(dashboard, null, 2) + '\n';
const arg = process.argv[2];
if (arg === '--metrics') {
  process.stdout.write(JSON.stringify({
    today: Object.values(TODAY), fabric: Object.values(FABRIC), expected: Object.values(EXPECTED),
  }) + '\n');
} else if (arg === '--check') {
  const have = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
  if (have !== text) {
    console.error(`${path.relative(process.cwd(), out)} is out of date: run node ${path.relative(process.cwd(), __filename)}`);
    process.exit(1);
  }
  console.log(`${path.basename(out)} is up to date`);
} else if (arg === undefined) {
  fs.writeFileSync(out, text);
  console.log(`wrote ${out}`);
} else {
  console.error(`unknown argument '${arg}' (give --check, --metrics or nothing)`);
  process.exit(2);
}
