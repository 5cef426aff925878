// SPDX-License-Identifier: Apache-2.0
'use strict';
// What `helm install`/`helm upgrade` plus the Kubernetes controllers would do
// with a rendered release, as a list of actions for podman. Pure: the input
// is the rendered objects and kube-run's record of what runs now.
//
// Actions (executed in order by run.js):
//   {op: 'network'}                           the cluster network
//   {op: 'apply', key, object}                record an object (ConfigMap, Secret,
//                                             Service, PVC, StatefulSet, CronJob, hook Pod)
//   {op: 'run-job', key, object, hook}        run a Job to completion (backoffLimit,
//                                             activeDeadlineSeconds)
//   {op: 'create-pod', pod, waitReady}        start a pod (podPlan) [and wait until ready]
//   {op: 'delete-pods', names, reason}        stop pods (preStop, grace period), in parallel
//   {op: 'replace-pod', name, pod}            rolling update of one pod, then wait until ready
//   {op: 'forget', key}                       an object gone from the release
//   {op: 'skip', key, reason}                 an object kube-run does not run

const { objectKey, hooksFor, releaseObjects, namespaceOf } = require('./manifest');
const { notHonoured } = require('./honoured');
const { podPlan, shortHash } = require('./pods');

function templateHash(sts) {
  const spec = sts.spec || {};
  return shortHash({ template: spec.template, claims: (spec.volumeClaimTemplates || []).map((v) => v.metadata.name) });
}

function replicasOf(sts) {
  const r = (sts.spec || {}).replicas;
  return r === undefined || r === null ? 1 : r;
}

// statefulSetPod(STS, ORDINAL, CTX) -> podPlan of pod ORDINAL.
function statefulSetPod(sts, ordinal, ctx) {
  const name = `${sts.metadata.name}-${ordinal}`;
  const tpl = sts.spec.template || {};
  const claims = {};
  for (const vct of sts.spec.volumeClaimTemplates || []) claims[vct.metadata.name] = `${vct.metadata.name}-${name}`;
  // a claim template's name is also a volume name in the pod
  const spec = { ...tpl.spec, volumes: [...(tpl.spec.volumes || [])] };
  for (const vname of Object.keys(claims)) {
    if (!spec.volumes.some((v) => v.name === vname)) spec.volumes.push({ name: vname, persistentVolumeClaim: { claimName: claims[vname] } });
  }
  return podPlan({
    name, hostname: name, subdomain: sts.spec.serviceName || '', labels: (tpl.metadata || {}).labels,
    owner: objectKey(sts), spec, claims, templateHash: templateHash(sts),
  }, ctx);
}

function ownedPods(state, key) {
  const owned = {};
  for (const [name, p] of Object.entries(state.pods || {})) {
    if (p.owner === key) owned[Number(name.slice(name.lastIndexOf('-') + 1))] = { name, ...p };
  }
  return owned;
}

// statefulSetActions(STS, STATE, CTX) -> create missing pods, remove pods
// above replicas, then roll pods whose template changed, highest ordinal
// first, each ready before the next (RollingUpdate).
function statefulSetActions(sts, state, ctx) {
  const key = objectKey(sts);
  const want = replicasOf(sts);
  const ordered = (sts.spec.podManagementPolicy || 'OrderedReady') === 'OrderedReady';
  const owned = ownedPods(state, key);
  const hash = templateHash(sts);
  const actions = [];
  for (let i = 0; i < want; i++) {
    if (!owned[i]) actions.push({ op: 'create-pod', pod: statefulSetPod(sts, i, ctx), waitReady: ordered && i < want - 1 });
  }
  const condemned = Object.keys(owned).map(Number).filter((i) => i >= want).sort((a, b) => b - a)
    .map((i) => owned[i].name);
  if (condemned.length) {
    if (ordered) condemned.forEach((n) => actions.push({ op: 'delete-pods', names: [n], reason: `${key} scaled to ${want}` }));
    else actions.push({ op: 'delete-pods', names: condemned, reason: `${key} scaled to ${want}` });
  }
  for (let i = want - 1; i >= 0; i--) {
    if (owned[i] && owned[i].templateHash !== hash) actions.push({ op: 'replace-pod', name: owned[i].name, pod: statefulSetPod(sts, i, ctx) });
  }
  return actions;
}

function objectActions(obj, state, ctx) {
  const key = objectKey(obj);
  switch (obj.kind) {
    case 'ConfigMap': case 'Secret': case 'Service': case 'PersistentVolumeClaim': case 'CronJob':
      return [{ op: 'apply', key, object: obj }];
    case 'StatefulSet':
      return [{ op: 'apply', key, object: obj }, ...statefulSetActions(obj, state, ctx)];
    case 'Job':
      return [{ op: 'run-job', key, object: obj, hook: false }];
    case 'Pod':
      return [{ op: 'apply', key, object: obj },
        { op: 'create-pod', pod: podPlan({ name: obj.metadata.name, labels: obj.metadata.labels, owner: key, spec: obj.spec }, ctx), waitReady: false }];
    default:
      return [{ op: 'skip', key, reason: `kind ${obj.kind} is not run by kube-run` }];
  }
}

function hookActions(obj) {
  const key = objectKey(obj);
  if (obj.kind === 'Job') return [{ op: 'run-job', key, object: obj, hook: true }];
  return [{ op: 'apply', key, object: obj, hook: true }];
}

// removedActions(NEWKEYS, STATE) -> stop what the new release no longer has.
function removedActions(newKeys, state) {
  const actions = [];
  for (const [key, obj] of Object.entries(state.objects || {})) {
    if (newKeys.has(key) || obj.hook) continue;
    const owned = Object.entries(state.pods || {}).filter(([, p]) => p.owner === key).map(([n]) => n);
    if (owned.length) actions.push({ op: 'delete-pods', names: owned, reason: `${key} removed from the release` });
    actions.push({ op: 'forget', key });
  }
  return actions;
}

// planApply(OBJECTS, STATE, CTX) -> {phase, namespace, actions, notHonoured}
//   CTX: {stateDir, prefix}
function planApply(objects, state, ctx) {
  const namespace = namespaceOf(objects);
  if (state.namespace && state.namespace !== namespace) {
    throw new Error(`the release runs in namespace ${state.namespace}; these objects are for ${namespace}`);
  }
  const phase = state.installed ? 'upgrade' : 'install';
  const release = releaseObjects(objects);
  const actions = [{ op: 'network' }];
  for (const h of hooksFor(objects, `pre-${phase}`)) actions.push(...hookActions(h));
  for (const obj of release) actions.push(...objectActions(obj, state, ctx));
  actions.push(...removedActions(new Set(release.map(objectKey)), state));
  for (const h of hooksFor(objects, `post-${phase}`)) actions.push(...hookActions(h));
  for (const h of hooksFor(objects, 'test')) actions.push({ op: 'apply', key: objectKey(h), object: h, hook: true });
  return { phase, namespace, actions, notHonoured: notHonoured(objects) };
}

// planScale(STS, REPLICAS, STATE, CTX): `kubectl scale`.
function planScale(sts, replicas, state, ctx) {
  const scaled = { ...sts, spec: { ...sts.spec, replicas } };
  return [{ op: 'apply', key: objectKey(sts), object: scaled }, ...statefulSetActions(scaled, state, ctx)];
}

// planReconcile(STS, STATE, CTX): what the StatefulSet controller does after
// one of its pods went away.
function planReconcile(sts, state, ctx) {
  return statefulSetActions(sts, state, ctx);
}

// jobPod(JOB, RUN, ATTEMPT, CTX) -> podPlan of one attempt of a Job.
function jobPod(job, run, attempt, ctx) {
  const tpl = (job.spec || {}).template || {};
  const name = `${job.metadata.name}-${shortHash([job.metadata.name, run, attempt], 5)}`;
  return podPlan({ name, labels: (tpl.metadata || {}).labels, owner: objectKey(job), spec: { restartPolicy: 'Never', ...tpl.spec } }, ctx);
}

// summary(PLAN) -> the plan for people and tests: objects by key (no
// Secret data), pods with their podman command lines.
function summary(plan) {
  const pod = (p) => ({
    name: p.name, hostname: p.hostname, subdomain: p.subdomain, owner: p.owner, grace: p.grace,
    volumes: p.volumes.map((v) => ({ name: v.name, type: v.type, hostPath: v.hostPath, source: v.source, defaultMode: v.defaultMode })),
    podCreate: p.create,
    initContainers: p.initContainers.map((c) => ({ name: c.name, create: c.create, env: c.env })),
    containers: p.containers.map((c) => ({
      name: c.name, create: c.create, env: c.env, postStart: c.postStart, preStop: c.preStop, readiness: c.readiness,
    })),
  });
  const actions = plan.actions.map((a) => {
    const out = { op: a.op };
    if (a.key) out.key = a.key;
    if (a.hook) out.hook = true;
    if (a.pod) out.pod = pod(a.pod);
    for (const k of ['name', 'names', 'reason', 'waitReady']) if (a[k] !== undefined) out[k] = a[k];
    return out;
  });
  return { phase: plan.phase, namespace: plan.namespace, actions, notHonoured: plan.notHonoured };
}

module.exports = { summary, planApply, planScale, planReconcile, statefulSetPod, templateHash, jobPod, replicasOf };
