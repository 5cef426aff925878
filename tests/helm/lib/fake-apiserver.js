#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// A fake Kubernetes API server, just enough for `helm template
// --dry-run=server` so that the chart's `lookup` calls get answers: API
// discovery, plus GET of Secrets read from a JSON file. Everything else is 404.
// This is the one boundary this machine cannot have (no kube-apiserver).
//
//   node fake-apiserver.js SECRETS.json PORTFILE LOG
//     SECRETS.json: array of v1 Secret objects (namespace set)
//     PORTFILE: the port it listens on (127.0.0.1) is written here
//     LOG: one line per request ("GET /path status")
'use strict';
const fs = require('fs');
const http = require('http');
const [secretsFile, portFile, logFile] = process.argv.slice(2);
const secrets = JSON.parse(fs.readFileSync(secretsFile, 'utf8'));

const groups = {
  apps: ['statefulsets', 'deployments'],
  batch: ['jobs', 'cronjobs'],
  'networking.k8s.io': ['networkpolicies'],
};
const coreResources = ['secrets', 'configmaps', 'services', 'pods', 'persistentvolumeclaims', 'namespaces'];
const kinds = {
  secrets: 'Secret', configmaps: 'ConfigMap', services: 'Service', pods: 'Pod',
  persistentvolumeclaims: 'PersistentVolumeClaim', namespaces: 'Namespace',
  statefulsets: 'StatefulSet', deployments: 'Deployment', jobs: 'Job', cronjobs: 'CronJob',
  networkpolicies: 'NetworkPolicy',
};
const resourceList = (gv, names) => ({
  kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv,
  resources: names.map((n) => ({
    name: n, singularName: '', namespaced: n !== 'namespaces', kind: kinds[n],
    verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
  })),
});

function route(path) {
  if (path === '/version') return [200, { major: '1', minor: '33', gitVersion: 'v1.33.0', platform: 'linux/amd64' }];
  if (path === '/api') return [200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] }];
  if (path === '/apis') {
    return [200, {
      kind: 'APIGroupList', apiVersion: 'v1',
      groups: Object.keys(groups).map((g) => ({
        name: g, versions: [{ groupVersion: `${g}/v1`, version: 'v1' }],
        preferredVersion: { groupVersion: `${g}/v1`, version: 'v1' },
      })),
    }];
  }
  if (path === '/api/v1') return [200, resourceList('v1', coreResources)];
  for (const g of Object.keys(groups)) {
    if (path === `/apis/${g}/v1`) return [200, resourceList(`${g}/v1`, groups[g])];
  }
  const m = path.match(/^\/api\/v1\/namespaces\/([^/]+)\/secrets\/([^/]+)$/);
  if (m) {
    const s = secrets.find((x) => x.metadata.namespace === m[1] && x.metadata.name === m[2]);
    if (s) return [200, s];
  }
  return [404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `${path} not found` }];
}

const server = http.createServer((req, res) => {
  const path = req.url.split('?')[0];
  const [code, body] = req.method === 'GET' ? route(path) : [405, { kind: 'Status', code: 405 }];
  fs.appendFileSync(logFile, `${req.method} ${path} ${code}\n`);
  res.writeHead(code, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
});
server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
