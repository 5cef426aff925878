// SPDX-License-Identifier: Apache-2.0
'use strict';
// kube-run's record of one release on this host: the objects it applied, the
// pods it runs (owner, template hash, address) and the address counter.
// Kept as state.json in the state directory, replaced atomically.

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');

function emptyState() {
  return { version: 1, installed: false, namespace: '', domain: 'cluster.local', objects: {}, hooks: {}, pods: {}, jobs: {}, nextIp: 10 };
}

function stateFile(dir) {
  return path.join(dir, 'state.json');
}

function load(dir) {
  const f = stateFile(dir);
  if (!fs.existsSync(f)) return emptyState();
  return { ...emptyState(), ...JSON.parse(fs.readFileSync(f, 'utf8')) };
}

function save(dir, state) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${stateFile(dir)}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(state, null, 1)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, stateFile(dir));
}

// Names of podman objects and network namespaces carry this prefix, unique
// per state directory, so two releases on one host never clash.
function prefixFor(dir) {
  return `kr${crypto.createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 6)}-`;
}

// Pod addresses: 10.244.0.0/16 inside the release's own network namespaces;
// .1 is the client namespace (`kube-run netns`).
function ipFor(n) {
  if (n < 2 || n > 65533) throw new Error('out of pod addresses (65533 pods in one release)');
  return `10.244.${Math.floor(n / 256)}.${n % 256}`;
}

function allocateIp(state) {
  const ip = ipFor(state.nextIp);
  state.nextIp += 1;
  return ip;
}

module.exports = { emptyState, load, save, prefixFor, ipFor, allocateIp };
