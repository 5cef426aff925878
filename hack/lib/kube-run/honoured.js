// SPDX-License-Identifier: Apache-2.0
'use strict';
// What kube-run honours of each object, field by field. Every field of a
// rendered object that is not listed as honoured here is reported, with the
// reason when it is a known limit of running on one podman host. Pure.

const { objectKey } = require('./manifest');

const ALL = true; // the whole subtree is honoured
const no = (reason) => ({ notHonoured: reason });
// when(test): honoured unless test(value) returns a reason
const when = (test) => ({ check: test });

const ONE_HOST = 'one podman host: no scheduling';
const NO_LIMITS = 'no resource requests or limits (no scheduler, no GPUs, no quotas)';

const metadata = { name: ALL, namespace: ALL, labels: ALL, annotations: ALL };

const probe = {
  tcpSocket: { port: ALL },
  initialDelaySeconds: ALL, periodSeconds: ALL, timeoutSeconds: ALL, failureThreshold: ALL,
  successThreshold: ALL,
  exec: no('only tcpSocket readiness probes are run'),
  httpGet: no('only tcpSocket readiness probes are run'),
  grpc: no('only tcpSocket readiness probes are run'),
};

const container = {
  name: ALL, image: ALL, command: ALL, args: ALL, workingDir: ALL,
  imagePullPolicy: when((v) => (v === 'Always' ? 'images come from local podman storage only; never pulled' : null)),
  env: {
    name: ALL, value: ALL,
    valueFrom: {
      secretKeyRef: ALL, configMapKeyRef: ALL,
      fieldRef: { fieldPath: when((v) => (['metadata.name', 'metadata.namespace', 'status.podIP'].includes(v) ? null : `fieldRef ${v} is not known`)), apiVersion: ALL },
      resourceFieldRef: no('no resource limits to expose'),
    },
  },
  envFrom: no('envFrom is not read'),
  ports: { name: ALL, containerPort: ALL, protocol: ALL, hostPort: no('no host ports') },
  volumeMounts: { name: ALL, mountPath: ALL, subPath: ALL, readOnly: ALL,
    mountPropagation: no('podman default propagation') },
  securityContext: {
    privileged: ALL, procMount: ALL, runAsUser: ALL, runAsGroup: ALL, readOnlyRootFilesystem: ALL,
    capabilities: { add: ALL, drop: ALL },
    allowPrivilegeEscalation: no('podman default (no-new-privileges off)'),
    seccompProfile: no('podman default seccomp profile'),
    seLinuxOptions: no('no SELinux on this host'),
    runAsNonRoot: no('not checked'),
  },
  lifecycle: {
    postStart: { exec: { command: ALL }, httpGet: no('only exec hooks'), tcpSocket: no('only exec hooks') },
    preStop: { exec: { command: ALL }, httpGet: no('only exec hooks'), tcpSocket: no('only exec hooks') },
  },
  readinessProbe: probe,
  livenessProbe: no('liveness probes are not run: a container is restarted only when it exits'),
  startupProbe: no('startup probes are not run'),
  resources: no(NO_LIMITS),
  stdin: ALL, tty: ALL,
  terminationMessagePath: no('not kept'), terminationMessagePolicy: no('not kept'),
};

const podSpec = {
  containers: container,
  initContainers: container,
  volumes: {
    name: ALL,
    configMap: { name: ALL, defaultMode: ALL, items: ALL, optional: ALL },
    secret: { secretName: ALL, defaultMode: ALL, items: ALL, optional: ALL },
    persistentVolumeClaim: { claimName: ALL, readOnly: ALL },
    emptyDir: { medium: ALL, sizeLimit: no('no size limit on the host directory') },
    hostPath: { path: ALL, type: ALL },
  },
  restartPolicy: ALL,
  terminationGracePeriodSeconds: ALL,
  hostname: ALL, subdomain: ALL,
  hostUsers: when((v) => (v === false ? 'runs in the host user namespace (podman --userns is not set; the jail must look root-owned without idmapped mounts)' : null)),
  nodeSelector: no(ONE_HOST), tolerations: no(ONE_HOST), affinity: no(ONE_HOST),
  topologySpreadConstraints: no(ONE_HOST), priorityClassName: no(ONE_HOST),
  imagePullSecrets: no('images come from local podman storage only; never pulled'),
  serviceAccountName: no('no API server, no service account tokens'),
  automountServiceAccountToken: no('no API server, no service account tokens'),
  securityContext: no('pod-level securityContext (fsGroup, sysctls, ...) is not applied'),
  dnsPolicy: no('names come from /etc/hosts written by kube-run'),
  dnsConfig: no('names come from /etc/hosts written by kube-run'),
  hostNetwork: no('every pod gets its own network namespace'),
  activeDeadlineSeconds: no('only Job deadlines are kept'),
};

const podTemplate = { metadata, spec: podSpec };

const pvcSpec = {
  accessModes: no('a host directory: every pod may mount it, read-write'),
  storageClassName: no('a host directory, no storage class'),
  resources: no('a host directory, no size'),
  volumeMode: no('a host directory'),
};

const KINDS = {
  ConfigMap: { data: ALL, binaryData: ALL, immutable: ALL },
  Secret: { data: ALL, stringData: ALL, type: ALL, immutable: ALL },
  PersistentVolumeClaim: { spec: pvcSpec },
  Service: {
    spec: {
      selector: ALL, publishNotReadyAddresses: ALL,
      clusterIP: ALL, // see serviceLimits
      type: when((v) => (!v || v === 'ClusterIP' ? null : `type ${v}: reachable only from inside the cluster network, like ClusterIP`)),
      ports: {
        name: ALL, protocol: ALL, port: ALL, targetPort: ALL,
        nodePort: no('no node ports: reachable only from inside the cluster network'),
      },
      loadBalancerSourceRanges: no('no load balancer'),
      sessionAffinity: no('no kube-proxy'), externalTrafficPolicy: no('no kube-proxy'),
    },
  },
  StatefulSet: {
    spec: {
      serviceName: ALL, replicas: ALL, podManagementPolicy: ALL, selector: ALL, template: podTemplate,
      updateStrategy: { type: when((v) => (v === 'OnDelete' ? 'updates always roll (RollingUpdate)' : null)),
        rollingUpdate: no('pods are updated one at a time') },
      volumeClaimTemplates: { metadata, spec: pvcSpec },
      persistentVolumeClaimRetentionPolicy: no('claims of removed pods are kept'),
      revisionHistoryLimit: no('no revision history'), minReadySeconds: no('not waited for'),
    },
  },
  Job: {
    spec: {
      backoffLimit: ALL, activeDeadlineSeconds: ALL, template: podTemplate,
      ttlSecondsAfterFinished: no('finished Jobs are kept until the next run'),
      completions: no('one completion'), parallelism: no('one pod at a time'),
    },
  },
  CronJob: {
    spec: {
      jobTemplate: { metadata, spec: { backoffLimit: ALL, activeDeadlineSeconds: ALL, template: podTemplate } },
      schedule: no('never scheduled: run a Job from it with `kube-run run-cronjob NAME`'),
      suspend: no('never scheduled'), concurrencyPolicy: no('never scheduled'),
      startingDeadlineSeconds: no('never scheduled'), timeZone: no('never scheduled'),
      successfulJobsHistoryLimit: no('no Job history'), failedJobsHistoryLimit: no('no Job history'),
    },
  },
  Pod: { spec: podSpec },
};

// Limits of a Service that no single field shows.
function serviceLimits(svc) {
  const spec = svc.spec || {};
  const out = [];
  if (spec.clusterIP !== 'None') {
    out.push({ path: 'spec.clusterIP', value: spec.clusterIP ? JSON.stringify(spec.clusterIP) : '(unset)',
      reason: 'no virtual IP: the name resolves to the address of one of its pods' });
  }
  (spec.ports || []).forEach((p, i) => {
    if (typeof p.targetPort === 'number' && p.targetPort !== p.port) {
      out.push({ path: `spec.ports[${i}]`, value: `${p.port}->${p.targetPort}`,
        reason: 'no port mapping: connect to the target port' });
    }
  });
  return out;
}

function summary(value) {
  const s = JSON.stringify(value);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

// walk(VALUE, RULE, PATH, OUT): pushes {path, value, reason} for every
// field RULE does not honour.
function walk(value, rule, path, out) {
  if (rule === ALL) return;
  if (rule && rule.notHonoured) { out.push({ path, value: summary(value), reason: rule.notHonoured }); return; }
  if (rule && rule.check) {
    const reason = rule.check(value);
    if (reason) out.push({ path, value: summary(value), reason });
    return;
  }
  if (Array.isArray(value)) { value.forEach((v, i) => walk(v, rule, `${path}[${i}]`, out)); return; }
  if (value === null || typeof value !== 'object') return;
  for (const [k, v] of Object.entries(value)) {
    const child = rule[k] !== undefined ? rule[k] : rule['*'];
    const p = path ? `${path}.${k}` : k;
    if (child === undefined) out.push({ path: p, value: summary(v), reason: 'not read by kube-run' });
    else walk(v, child, p, out);
  }
}

// notHonoured(objects) -> [{object, path, value, reason}] for every object.
function notHonoured(objects) {
  const out = [];
  for (const obj of objects) {
    const spec = KINDS[obj.kind];
    if (!spec) {
      out.push({ object: objectKey(obj), path: '', value: '', reason: `kind ${obj.kind} is not run by kube-run` });
      continue;
    }
    const rule = { apiVersion: ALL, kind: ALL, metadata, status: ALL, ...spec };
    const found = [];
    walk(obj, rule, '', found);
    if (obj.kind === 'Service') found.push(...serviceLimits(obj));
    for (const f of found) out.push({ object: objectKey(obj), ...f });
  }
  return out;
}

// A line per entry, for people.
function formatNotHonoured(list) {
  return list.map((e) => (e.path
    ? `${e.object}: ${e.path}=${e.value}: ${e.reason}`
    : `${e.object}: ${e.reason}`));
}

module.exports = { notHonoured, formatNotHonoured };
