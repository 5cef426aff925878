// SPDX-License-Identifier: Apache-2.0
'use strict';
// A read-only Kubernetes API for `helm template --dry-run=server`, so that
// the chart's `lookup` calls see the objects kube-run has applied, as on
// `helm upgrade` (kept Secrets stay the same). Discovery plus GET of single
// objects; everything else is 404. Listens on 127.0.0.1 only.
//
// kube-run uses it as a module. The chart tests run it on its own, holding
// objects read from a file (no kube-apiserver can be had there):
//
//   node apiserver.js OBJECTS.json PORTFILE LOG
//     OBJECTS.json: array of Kubernetes objects (metadata.namespace set)
//     PORTFILE: the port it listens on (127.0.0.1) is written here
//     LOG: one line per request ("GET /path status")

const fs = require('fs');
const http = require('http');

// resource name -> [group ('' for core), kind]
const RESOURCES = {
  secrets: ['', 'Secret'], configmaps: ['', 'ConfigMap'], services: ['', 'Service'], pods: ['', 'Pod'],
  persistentvolumeclaims: ['', 'PersistentVolumeClaim'], namespaces: ['', 'Namespace'],
  statefulsets: ['apps', 'StatefulSet'], deployments: ['apps', 'Deployment'],
  jobs: ['batch', 'Job'], cronjobs: ['batch', 'CronJob'], networkpolicies: ['networking.k8s.io', 'NetworkPolicy'],
};

function resourceList(groupVersion, group) {
  return {
    kind: 'APIResourceList', apiVersion: 'v1', groupVersion,
    resources: Object.entries(RESOURCES).filter(([, [g]]) => g === group).map(([name, [, kind]]) => ({
      name, singularName: '', namespaced: name !== 'namespaces', kind,
      verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
    })),
  };
}

function notFound(path) {
  return [404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `${path} not found` }];
}

// route(PATH, FIND) -> [status, body]; FIND(kind, namespace, name) -> object or null.
function route(path, find) {
  const groups = [...new Set(Object.values(RESOURCES).map(([g]) => g).filter(Boolean))];
  if (path === '/version') return [200, { major: '1', minor: '33', gitVersion: 'v1.33.0', platform: 'linux/amd64' }];
  if (path === '/api') return [200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] }];
  if (path === '/apis') {
    return [200, {
      kind: 'APIGroupList', apiVersion: 'v1',
      groups: groups.map((g) => ({ name: g, versions: [{ groupVersion: `${g}/v1`, version: 'v1' }], preferredVersion: { groupVersion: `${g}/v1`, version: 'v1' } })),
    }];
  }
  if (path === '/api/v1') return [200, resourceList('v1', '')];
  for (const g of groups) if (path === `/apis/${g}/v1`) return [200, resourceList(`${g}/v1`, g)];
  const m = path.match(/^\/(?:api\/v1|apis\/([^/]+)\/v1)\/namespaces\/([^/]+)\/([^/]+)\/([^/]+)$/);
  if (m && RESOURCES[m[3]] && RESOURCES[m[3]][0] === (m[1] || '')) {
    const obj = find(RESOURCES[m[3]][1], m[2], m[4]);
    if (obj) return [200, obj];
  }
  return notFound(path);
}

// serve(FIND, LOG) -> Promise<{port, close()}>; LOG(method, path, status), if given, sees every request.
function serve(find, log) {
  const server = http.createServer((req, res) => {
    const path = req.url.split('?')[0];
    const [code, body] = req.method === 'GET' ? route(path, find) : [405, { kind: 'Status', code: 405 }];
    if (log) log(req.method, path, code);
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ port: server.address().port, close: () => server.close() }));
  });
}

function kubeconfig(port, namespace) {
  return `apiVersion: v1
kind: Config
clusters: [{name: kube-run, cluster: {server: "http://127.0.0.1:${port}"}}]
users: [{name: kube-run, user: {token: kube-run}}]
contexts: [{name: kube-run, context: {cluster: kube-run, user: kube-run, namespace: ${namespace}}}]
current-context: kube-run
`;
}

// findIn(OBJECTS) -> FIND over a list of objects
function findIn(objects) {
  return (kind, namespace, name) => objects.find((o) => o.kind === kind
    && o.metadata.namespace === namespace && o.metadata.name === name) || null;
}

async function main([objectsFile, portFile, logFile]) {
  const objects = JSON.parse(fs.readFileSync(objectsFile, 'utf8'));
  const api = await serve(findIn(objects), (method, path, code) => fs.appendFileSync(logFile, `${method} ${path} ${code}\n`));
  fs.writeFileSync(portFile, String(api.port));
  process.on('SIGTERM', () => { api.close(); process.exit(0); });
}

if (require.main === module) main(process.argv.slice(2));

module.exports = { route, serve, kubeconfig };
