#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Checks a Grafana dashboard JSON against Grafana's own schema, the package
// @grafana/schema, which ships it as TypeScript types only: the JSON is
// written into a TypeScript file as object literals and tsc checks them with
// `satisfies`, which also rejects keys the types do not have.
//   - the whole dashboard against `Dashboard`;
//   - each panel's `options` and `fieldConfig.defaults.custom` against the
//     types of its panel plugin (a panel type without types is an error).
// JSON has no enums: an enum-typed field holds the enum's value (Json<T>).
//
//   node grafana-check.js DASHBOARD.json    exit 0 if valid; else tsc's errors
//                                           with the offending lines, exit 1
// Needs @grafana/schema and typescript in NODE_PATH (hack/deps/helm.sh).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const modules = (process.env.NODE_PATH || '').split(':').find((d) => d && fs.existsSync(path.join(d, '@grafana/schema')));
if (!modules) {
  console.error('grafana-check: @grafana/schema not found in NODE_PATH: run hack/deps/helm.sh');
  process.exit(2);
}
const file = process.argv[2];
if (!file) {
  console.error('usage: grafana-check.js DASHBOARD.json');
  process.exit(2);
}
const dashboard = JSON.parse(fs.readFileSync(file, 'utf8'));

// Panel plugin id -> the folder of its types under raw/composable and their prefix.
const PLUGINS = {
  stat: ['stat', 'Stat'],
  bargauge: ['bargauge', 'BarGauge'],
  table: ['table', 'Table'],
  timeseries: ['timeseries', 'TimeSeries'],
  'status-history': ['statushistory', 'StatusHistory'],
  'state-timeline': ['statetimeline', 'StateTimeline'],
  text: ['text', 'Text'],
};
const composable = path.join(modules, '@grafana/schema/dist/types/raw/composable');

const panels = [];
for (const p of dashboard.panels || []) {
  if (p.type === 'row') panels.push(...(p.panels || []));
  else panels.push(p);
}

const lines = [
  "import type { Dashboard, Panel } from '@grafana/schema';",
  'type Json<T> = T extends string ? `${T}` : T extends readonly (infer U)[] ? Json<U>[] :',
  '  T extends object ? { [K in keyof T]: Json<T[K]> } : T;',
  "type PanelOf<O, F> = Omit<Panel<O, F>, 'options'> & { options?: O };",
];
const imported = new Set();
const bad = [];
for (const p of panels) {
  const plugin = PLUGINS[p.type];
  if (!plugin) { bad.push(`panel ${p.id} '${p.title}': type '${p.type}' has no types in @grafana/schema that this check knows`); continue; }
  if (imported.has(p.type)) continue;
  imported.add(p.type);
  const [dir, prefix] = plugin;
  lines.push(`import type * as ${dir} from '@grafana/schema/dist/esm/raw/composable/${dir}/panelcfg/x/${prefix}PanelCfg_types.gen';`);
}
if (bad.length) { console.error(bad.join('\n')); process.exit(1); }

// Which panel each line of the TypeScript file belongs to, for the errors.
const owner = [];
const emit = (text, owned) => {
  for (const l of text.split('\n')) { lines.push(l); owner[lines.length] = owned; }
};
emit(`export const dashboard = ${JSON.stringify(dashboard, null, 2)} satisfies Json<Dashboard>;`, 'the dashboard');
for (const p of panels) {
  const dir = PLUGINS[p.type][0];
  const types = fs.readFileSync(path.join(composable, dir, 'panelcfg/x/types.gen.d.ts'), 'utf8');
  const custom = /export interface FieldConfig\b/.test(types) ? `${dir}.FieldConfig` : 'Record<string, unknown>';
  const options = /export interface Options\b/.test(types) ? `${dir}.Options` : 'Record<string, unknown>';
  emit(`export const panel${p.id} = ${JSON.stringify(p, null, 2)} satisfies Json<PanelOf<${options}, ${custom}>>;`,
    `panel ${p.id} '${p.title}' (${p.type})`);
}

// Its files go whatever tsc says: process.exit() here would skip `finally`.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'grafana-check-'));
try {
  process.exitCode = check(tmp);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}

// check(TMP): writes the TypeScript file and its tsconfig into TMP, runs tsc;
// the exit status: 0 valid, 1 tsc's errors (printed), 2 tsc did not run.
function check(tmp) {
  fs.writeFileSync(path.join(tmp, 'check.ts'), lines.join('\n') + '\n');
  fs.writeFileSync(path.join(tmp, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true, noEmit: true, module: 'esnext', moduleResolution: 'bundler', target: 'es2022',
      types: [], typeRoots: [],
    },
    files: ['check.ts'],
  }));
  fs.symlinkSync(modules, path.join(tmp, 'node_modules'));
  const tsc = spawnSync(path.join(modules, '.bin/tsc'), ['-p', tmp, '--pretty', 'false'], { encoding: 'utf8' });
  if (tsc.error) {
    console.error(`grafana-check: cannot run tsc: ${tsc.error.message}`);
    return 2;
  }
  if (tsc.status !== 0) {
    for (const l of (tsc.stdout + tsc.stderr).split('\n').filter(Boolean)) {
      const m = l.match(/check\.ts\((\d+),\d+\): (.*)$/);
      if (!m) { console.error(l); continue; }
      const n = Number(m[1]);
      console.error(`${owner[n] || 'header'}: ${m[2]}\n    ${lines[n - 1].trim()}`);
    }
    return 1;
  }
  console.log(`${file}: valid against @grafana/schema ${require(path.join(modules, '@grafana/schema/package.json')).version} (${panels.length} panels)`);
  return 0;
}
