#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Validates every object of a `helm template` output (stdin) against
// Kubernetes' own API schemas, as shipped in the npm package
// kubernetes-models (compiled from the Kubernetes OpenAPI spec): types,
// required fields, enums and formats. Its validators accept unknown fields,
// which `kubectl apply` (strict field validation) rejects, so unknown fields
// are checked too, against the field lists of the package's type
// declarations (generated from the same spec). An object whose
// apiVersion/kind has no schema there is an error too, so nothing goes
// unchecked.
//
//   helm template ... | node k8s-validate.js [--json OUT]
//
// Prints one line per invalid object and exits 1 if any; with --json, writes
// the parsed objects as a JSON array to OUT (for jq assertions).
'use strict';
const fs = require('fs');
const YAML = require('yaml');

const out = process.argv[2] === '--json' ? process.argv[3] : null;
const text = fs.readFileSync(0, 'utf8');

function modelClass(apiVersion, kind) {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return null;
  let mod;
  try {
    mod = require(`kubernetes-models/${apiVersion}`);
  } catch (e) {
    return null;
  }
  return typeof mod[kind] === 'function' ? mod[kind] : null;
}

// --- unknown fields, from the .d.ts declarations -------------------------
const path = require('path');
const modelsDir = path.dirname(require.resolve('kubernetes-models/package.json'));
const modulesDir = path.dirname(modelsDir);
const interfaces = new Map(); // .d.ts file -> {typeMeta, props: {name: type}, imports: {alias: file}}

function parseDts(file) {
  if (interfaces.has(file)) return interfaces.get(file);
  let info = null;
  if (fs.existsSync(file)) {
    const text = fs.readFileSync(file, 'utf8');
    const imports = {};
    for (const m of text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) {
      imports[m[1]] = m[2].startsWith('.')
        ? path.join(path.dirname(file), `${m[2]}.d.ts`)
        : path.join(modulesDir, `${m[2]}.d.ts`);
    }
    const head = text.match(/^export interface I\w+(?: extends ([\w, ]+))? \{$/m);
    if (head) {
      const body = text.slice(head.index).split('\n');
      const props = {};
      for (const line of body.slice(1)) {
        if (line === '}') break;
        const p = line.match(/^ {4}"([^"]+)"\??: (.*)$/);
        if (p) props[p[1]] = p[2].replace(/;$/, '');
      }
      info = { typeMeta: /TypeMeta/.test(head[1] || ''), props, imports };
    }
  }
  interfaces.set(file, info);
  return info;
}

// unknownFields(value, file, where, out): push "where.field" for every field
// of value that the interface declared in file does not have.
function unknownFields(value, file, where, out) {
  const info = parseDts(file);
  if (!info || value === null || typeof value !== 'object' || Array.isArray(value)) return;
  for (const [k, v] of Object.entries(value)) {
    if (info.typeMeta && (k === 'apiVersion' || k === 'kind')) continue;
    const type = info.props[k];
    if (type === undefined) { out.push(`${where}.${k}`); continue; }
    const ref = type.match(/^(Array<)?(I\w+)>?$/);
    if (!ref || !info.imports[ref[2]]) continue; // primitive, enum or map
    const target = info.imports[ref[2]];
    if (ref[1] && Array.isArray(v)) v.forEach((item, i) => unknownFields(item, target, `${where}.${k}[${i}]`, out));
    else if (!ref[1]) unknownFields(v, target, `${where}.${k}`, out);
  }
}

const objects = [];
const errors = [];
// YAML 1.1, as Kubernetes reads it (0755 is octal, yes/no are booleans).
const docs = YAML.parseAllDocuments(text, { version: '1.1' });
docs.forEach((doc, i) => {
  if (doc.errors.length) {
    errors.push(`document ${i}: YAML error: ${doc.errors[0].message}`);
    return;
  }
  const obj = doc.toJS();
  if (obj === null || obj === undefined) return; // empty document
  const name = `${obj.kind}/${obj.metadata && obj.metadata.name}`;
  const Model = modelClass(obj.apiVersion, obj.kind);
  if (!Model) {
    errors.push(`${name}: no Kubernetes schema for apiVersion ${obj.apiVersion} kind ${obj.kind}`);
    return;
  }
  try {
    new Model(obj).validate();
  } catch (e) {
    errors.push(`${name}: ${e.message}`);
  }
  const unknown = [];
  unknownFields(obj, path.join(modelsDir, obj.apiVersion, `${obj.kind}.d.ts`), '', unknown);
  for (const u of unknown) errors.push(`${name}: unknown field ${u.slice(1)}`);
  objects.push(obj);
});

if (objects.length === 0 && errors.length === 0) errors.push('no objects in input');
if (out) fs.writeFileSync(out, JSON.stringify(objects, null, 1));
for (const e of errors) console.error(`INVALID ${e}`);
console.error(`${objects.length} objects checked, ${errors.length} invalid`);
process.exit(errors.length ? 1 : 0);
