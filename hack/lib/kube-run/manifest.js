// SPDX-License-Identifier: Apache-2.0
'use strict';
// Reading `helm template` output: the objects, their Helm hook annotations,
// and the order Helm gives them. Pure: no files, no processes.

// Helm's install order of kinds (pkg/release/util/kind_sorter.go); hooks of
// equal weight are run in this order too, unknown kinds last.
const INSTALL_ORDER = [
  'PriorityClass', 'Namespace', 'NetworkPolicy', 'ResourceQuota', 'LimitRange',
  'PodSecurityPolicy', 'PodDisruptionBudget', 'ServiceAccount', 'Secret', 'SecretList',
  'ConfigMap', 'StorageClass', 'PersistentVolume', 'PersistentVolumeClaim',
  'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleList', 'ClusterRoleBinding',
  'ClusterRoleBindingList', 'Role', 'RoleList', 'RoleBinding', 'RoleBindingList', 'Service',
  'DaemonSet', 'Pod', 'ReplicationController', 'ReplicaSet', 'Deployment',
  'HorizontalPodAutoscaler', 'StatefulSet', 'Job', 'CronJob', 'IngressClass', 'Ingress',
  'APIService',
];

function kindRank(kind) {
  const i = INSTALL_ORDER.indexOf(kind);
  return i < 0 ? INSTALL_ORDER.length : i;
}

// parseManifest(TEXT, YAML) -> objects, in the order given. Empty documents
// (templates that rendered nothing) are dropped; anything that is not a
// Kubernetes object is an error naming the document. YAML 1.1, as the API
// server reads it: `defaultMode: 0400` is octal.
function parseManifest(text, YAML) {
  const objects = [];
  YAML.parseAllDocuments(text, { version: '1.1' }).forEach((doc, i) => {
    if (doc.errors.length) throw new Error(`document ${i + 1}: ${doc.errors[0].message}`);
    const obj = doc.toJSON();
    if (obj === null || obj === undefined) return;
    if (typeof obj !== 'object' || !obj.kind || !obj.metadata || !obj.metadata.name) {
      throw new Error(`document ${i + 1} is not a Kubernetes object (no kind or metadata.name)`);
    }
    objects.push(obj);
  });
  return objects;
}

function objectKey(obj) {
  return `${obj.kind}/${obj.metadata.name}`;
}

function annotation(obj, name) {
  return ((obj.metadata && obj.metadata.annotations) || {})[name];
}

// hookOf(obj) -> null, or {events, weight, deletePolicies} from helm.sh/hook*.
function hookOf(obj) {
  const events = annotation(obj, 'helm.sh/hook');
  if (!events) return null;
  const split = (s) => String(s || '').split(',').map((x) => x.trim()).filter(Boolean);
  return {
    events: split(events),
    weight: parseInt(annotation(obj, 'helm.sh/hook-weight') || '0', 10) || 0,
    deletePolicies: split(annotation(obj, 'helm.sh/hook-delete-policy') || 'before-hook-creation'),
  };
}

// hooksFor(objects, event) -> the hooks of that event in Helm's order:
// weight, then kind, then name.
function hooksFor(objects, event) {
  return objects
    .filter((o) => { const h = hookOf(o); return h && h.events.includes(event); })
    .sort((a, b) => hookOf(a).weight - hookOf(b).weight ||
      kindRank(a.kind) - kindRank(b.kind) ||
      a.metadata.name.localeCompare(b.metadata.name));
}

// releaseObjects(objects) -> the objects that are not hooks, in install order
// (helm template already prints them so; the sort is stable).
function releaseObjects(objects) {
  return objects.filter((o) => !hookOf(o))
    .map((o, i) => [o, i])
    .sort(([a, i], [b, j]) => kindRank(a.kind) - kindRank(b.kind) || i - j)
    .map(([o]) => o);
}

// One namespace per release, as `helm template -n` gives it.
function namespaceOf(objects) {
  const names = [...new Set(objects.map((o) => o.metadata.namespace).filter(Boolean))];
  if (names.length > 1) {
    throw new Error(`objects in several namespaces (${names.join(', ')}); kube-run runs one namespace`);
  }
  return names[0] || 'default';
}

module.exports = {
  INSTALL_ORDER, parseManifest, objectKey, annotation, hookOf, hooksFor, releaseObjects, namespaceOf,
};
