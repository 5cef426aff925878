// SPDX-License-Identifier: Apache-2.0
'use strict';
// From a pod spec to what podman must do: host directories for the volumes,
// the files of ConfigMap and Secret volumes, environment files, and one
// `podman create` command line per container. Pure: paths are computed, not
// touched; values of Secrets are looked up through ctx.lookup.

const path = require('path');
const crypto = require('crypto');

// The capabilities a container gets from containerd/CRI-O when its
// securityContext adds or drops nothing (podman's own default set is
// smaller: it lacks MKNOD, NET_RAW and AUDIT_WRITE).
const RUNTIME_DEFAULT_CAPS = [
  'AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE',
  'NET_RAW', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT',
];

// Stable JSON (sorted keys), so equal specs hash equally.
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function shortHash(value, n = 10) {
  return crypto.createHash('sha256').update(canonical(value)).digest('hex').slice(0, n);
}

// Where a pod's own files live under the state directory.
function podDir(ctx, podName) {
  return path.join(ctx.stateDir, 'pods', podName);
}

function claimDir(ctx, claimName) {
  return path.join(ctx.stateDir, 'volumes', claimName);
}

// volumePlan(VOLUME, POD, CTX) -> {name, type, hostPath, files?, medium?}
function volumePlan(vol, pod, ctx) {
  const own = path.join(podDir(ctx, pod.name), 'volumes', vol.name);
  if (vol.persistentVolumeClaim) {
    const claim = pod.claims && pod.claims[vol.name] ? pod.claims[vol.name] : vol.persistentVolumeClaim.claimName;
    return { name: vol.name, type: 'pvc', claim, hostPath: claimDir(ctx, claim),
      readOnly: !!vol.persistentVolumeClaim.readOnly };
  }
  if (vol.emptyDir) {
    return { name: vol.name, type: 'emptyDir', hostPath: own, medium: vol.emptyDir.medium || '' };
  }
  if (vol.hostPath) return { name: vol.name, type: 'hostPath', hostPath: vol.hostPath.path, hostPathType: vol.hostPath.type || '' };
  for (const kind of ['configMap', 'secret']) {
    const src = vol[kind];
    if (!src) continue;
    const objName = kind === 'secret' ? src.secretName : src.name;
    const objKind = kind === 'secret' ? 'Secret' : 'ConfigMap';
    const mode = src.defaultMode === undefined ? 0o644 : src.defaultMode;
    return { name: vol.name, type: kind, hostPath: own, source: `${objKind}/${objName}`,
      optional: !!src.optional, defaultMode: mode, items: src.items || null };
  }
  throw new Error(`pod ${pod.name}: volume ${vol.name} has no type kube-run knows (configMap, secret, persistentVolumeClaim, emptyDir, hostPath)`);
}

// configFiles(VOLUMEPLAN, OBJECT) -> [{key, path, mode, content(Buffer)}]:
// the files of a ConfigMap or Secret volume, as the kubelet writes them.
function configFiles(vp, obj) {
  const entries = {};
  if (obj.kind === 'Secret') {
    for (const [k, v] of Object.entries(obj.data || {})) entries[k] = Buffer.from(v, 'base64');
    for (const [k, v] of Object.entries(obj.stringData || {})) entries[k] = Buffer.from(String(v));
  } else {
    for (const [k, v] of Object.entries(obj.data || {})) entries[k] = Buffer.from(String(v));
    for (const [k, v] of Object.entries(obj.binaryData || {})) entries[k] = Buffer.from(v, 'base64');
  }
  const items = vp.items || Object.keys(entries).sort().map((k) => ({ key: k, path: k }));
  return items.map((it) => {
    if (!(it.key in entries)) throw new Error(`${vp.source} has no key '${it.key}' (volume ${vp.name})`);
    const mode = it.mode === undefined ? vp.defaultMode : it.mode;
    return { key: it.key, path: it.path, mode, content: entries[it.key] };
  });
}

function portNumber(container, port) {
  if (typeof port === 'number') return port;
  const p = (container.ports || []).find((x) => x.name === port);
  if (!p) throw new Error(`container ${container.name}: no port named '${port}'`);
  return p.containerPort;
}

// capabilityArgs(SECURITYCONTEXT) -> podman arguments giving exactly the
// capabilities Kubernetes would.
function securityArgs(sc) {
  sc = sc || {};
  if (sc.privileged) return ['--privileged'];
  const strip = (c) => String(c).toUpperCase().replace(/^CAP_/, '');
  const drop = ((sc.capabilities || {}).drop || []).map(strip);
  const add = ((sc.capabilities || {}).add || []).map(strip);
  let caps = drop.includes('ALL') ? [] : RUNTIME_DEFAULT_CAPS.filter((c) => !drop.includes(c));
  caps = [...new Set([...caps, ...add])].sort();
  const args = ['--cap-drop=all', ...caps.map((c) => `--cap-add=${c}`)];
  if (sc.procMount === 'Unmasked') args.push('--security-opt', 'unmask=ALL');
  if (sc.runAsUser !== undefined) {
    args.push('--user', sc.runAsGroup !== undefined ? `${sc.runAsUser}:${sc.runAsGroup}` : String(sc.runAsUser));
  }
  if (sc.readOnlyRootFilesystem) args.push('--read-only');
  return args;
}

function mountArgs(container, volumes, podName) {
  const args = [];
  for (const m of container.volumeMounts || []) {
    const vp = volumes.find((v) => v.name === m.name);
    if (!vp) throw new Error(`pod ${podName}: container ${container.name} mounts unknown volume ${m.name}`);
    const src = m.subPath ? path.join(vp.hostPath, m.subPath) : vp.hostPath;
    const ro = m.readOnly || vp.readOnly;
    args.push('--volume', `${src}:${m.mountPath}${ro ? ':ro' : ''}`);
  }
  return args;
}

// Subdirectories named by subPath mounts: the kubelet creates them.
function subPaths(containers, volumes) {
  const out = [];
  for (const c of containers) {
    for (const m of c.volumeMounts || []) {
      const vp = volumes.find((v) => v.name === m.name);
      if (m.subPath && vp && ['pvc', 'emptyDir', 'hostPath'].includes(vp.type)) out.push(path.join(vp.hostPath, m.subPath));
    }
  }
  return [...new Set(out)];
}

function restartFlag(policy, isInit) {
  if (isInit) return 'no';
  return { Always: 'always', OnFailure: 'on-failure', Never: 'no' }[policy || 'Always'];
}

// containerPlan(C, POD, ISINIT, CTX) -> {name, podmanName, image, envFile, env, create, postStart, preStop, readiness}
function containerPlan(c, pod, isInit, ctx) {
  const podmanName = `${pod.podmanName}-${c.name}`;
  const envFile = path.join(podDir(ctx, pod.name), 'env', c.name);
  const dir = podDir(ctx, pod.name);
  const create = [
    'create', '--name', podmanName, '--pod', pod.podmanName, '--pull=never',
    '--label', `kube-run.state=${ctx.stateDir}`,
    '--restart', restartFlag(pod.restartPolicy, isInit),
    '--stop-timeout', String(pod.grace),
    '--env-file', envFile,
    '--volume', `${dir}/hosts:/etc/hosts:ro`,
    '--volume', `${dir}/resolv.conf:/etc/resolv.conf:ro`,
    ...mountArgs(c, pod.volumes, pod.name),
    ...securityArgs(c.securityContext),
  ];
  if (c.workingDir) create.push('--workdir', c.workingDir);
  if (c.stdin) create.push('--interactive');
  if (c.tty) create.push('--tty');
  if (c.command) create.push('--entrypoint', JSON.stringify(c.command));
  create.push(c.image, ...(c.args || []));
  const hook = (h) => (h && h.exec && h.exec.command ? h.exec.command : null);
  const lc = c.lifecycle || {};
  const rp = c.readinessProbe;
  return {
    name: c.name, podmanName, image: c.image, envFile, env: c.env || [], create,
    postStart: hook(lc.postStart), preStop: hook(lc.preStop),
    readiness: rp && rp.tcpSocket ? {
      port: portNumber(c, rp.tcpSocket.port),
      initialDelaySeconds: rp.initialDelaySeconds || 0,
      periodSeconds: rp.periodSeconds || 10,
    } : null,
  };
}

// podPlan({name, hostname, subdomain, labels, owner, spec, claims}, CTX)
//   CTX: {stateDir, prefix}
// claims maps a volume name to the PVC of a volumeClaimTemplate.
function podPlan(p, ctx) {
  const spec = p.spec;
  const pod = {
    name: p.name, podmanName: `${ctx.prefix}${p.name}`, hostname: p.hostname || p.name,
    subdomain: p.subdomain || '', labels: p.labels || {}, owner: p.owner || '',
    templateHash: p.templateHash || '', claims: p.claims || {},
    restartPolicy: spec.restartPolicy || 'Always',
    grace: spec.terminationGracePeriodSeconds === undefined ? 30 : spec.terminationGracePeriodSeconds,
    dir: podDir(ctx, p.name),
  };
  if (pod.hostname.length > 63) throw new Error(`pod ${p.name}: hostname longer than 63 characters`);
  pod.volumes = (spec.volumes || []).map((v) => volumePlan(v, pod, ctx));
  const init = spec.initContainers || [];
  const main = spec.containers || [];
  pod.subPaths = subPaths([...init, ...main], pod.volumes);
  pod.initContainers = init.map((c) => containerPlan(c, pod, true, ctx));
  pod.containers = main.map((c) => containerPlan(c, pod, false, ctx));
  pod.create = ['pod', 'create', '--name', pod.podmanName, '--hostname', pod.hostname,
    '--network', 'none', '--infra-name', `${pod.podmanName}-infra`, '--share', 'ipc,net,uts',
    '--label', `kube-run.state=${ctx.stateDir}`, '--label', `kube-run.pod=${p.name}`];
  return pod;
}

// envLines(CONTAINERPLAN, POD, LOOKUP) -> "NAME=VALUE" lines for podman
// --env-file, with valueFrom resolved as the kubelet does at pod start.
function envLines(cp, pod, lookup) {
  return cp.env.map((e) => `${e.name}=${envValue(e, pod, lookup)}`).map((line) => {
    if (line.includes('\n')) throw new Error(`pod ${pod.name}: env ${line.split('=')[0]} has a newline; podman env files cannot carry it`);
    return line;
  });
}

function envValue(e, pod, lookup) {
  if (!e.valueFrom) return e.value === undefined ? '' : String(e.value);
  const vf = e.valueFrom;
  const ref = vf.secretKeyRef || vf.configMapKeyRef;
  if (ref) {
    const kind = vf.secretKeyRef ? 'Secret' : 'ConfigMap';
    const obj = lookup(kind, ref.name);
    const raw = obj && ((obj.data || {})[ref.key] !== undefined ? obj.data[ref.key] : (obj.stringData || {})[ref.key]);
    if (raw === undefined) {
      if (ref.optional) return '';
      throw new Error(`pod ${pod.name}: env ${e.name}: ${kind} ${ref.name} key ${ref.key} not found`);
    }
    return kind === 'Secret' && obj.data && obj.data[ref.key] !== undefined ? Buffer.from(raw, 'base64').toString() : String(raw);
  }
  if (vf.fieldRef) {
    const f = vf.fieldRef.fieldPath;
    if (f === 'metadata.name') return pod.name;
    if (f === 'metadata.namespace') return pod.namespace || '';
    if (f === 'status.podIP') return pod.ip || '';
  }
  throw new Error(`pod ${pod.name}: env ${e.name}: valueFrom not supported`);
}

module.exports = {
  RUNTIME_DEFAULT_CAPS, canonical, shortHash, podPlan, configFiles, envLines, securityArgs, claimDir, podDir,
};
