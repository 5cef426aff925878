#!/usr/bin/env node
// Validates every object of a `helm template` output (stdin) against
// Kubernetes' own API schemas, as shipped in the npm package
// kubernetes-models (compiled from the Kubernetes OpenAPI spec): types,
// required fields, enums and formats. An object whose apiVersion/kind has no
// schema there is an error too, so nothing goes unchecked.
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
  objects.push(obj);
});

if (objects.length === 0 && errors.length === 0) errors.push('no objects in input');
if (out) fs.writeFileSync(out, JSON.stringify(objects, null, 1));
for (const e of errors) console.error(`INVALID ${e}`);
console.error(`${objects.length} objects checked, ${errors.length} invalid`);
process.exit(errors.length ? 1 : 0);
