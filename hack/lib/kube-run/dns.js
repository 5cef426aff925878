// SPDX-License-Identifier: Apache-2.0
'use strict';
// The names Kubernetes' cluster DNS would give, written as /etc/hosts lines
// (no DNS server runs). Pure.
//
//   Service S:                 S.NS.svc.DOMAIN  -> the addresses of its pods
//   pod H with subdomain S of
//   a headless Service S:      H.S.NS.svc.DOMAIN -> the pod's address
// plus the shorter forms the pod's search path (NS.svc.DOMAIN svc.DOMAIN
// DOMAIN) would complete, since /etc/hosts lookups do not use it. A pod's
// own hostname resolves only in that pod, as in Kubernetes.

function selects(selector, labels) {
  const entries = Object.entries(selector || {});
  return entries.length > 0 && entries.every(([k, v]) => (labels || {})[k] === v);
}

// Every completion of NAME under the search path.
function searchForms(name, ns, domain) {
  return [name, `${name}.${ns}`, `${name}.${ns}.svc`, `${name}.${ns}.svc.${domain}`];
}

function podFqdn(pod, ns, domain) {
  return pod.subdomain ? `${pod.hostname}.${pod.subdomain}.${ns}.svc.${domain}` : '';
}

// records(PODS, SERVICES, NS, DOMAIN) -> [{ip, names}], Service names
// first in pod-name order (so the lowest ordinal answers first).
function records(pods, services, ns, domain) {
  const out = [];
  const live = pods.filter((p) => p.ip).sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
  for (const svc of services) {
    const spec = svc.spec || {};
    const mine = live.filter((p) => selects(spec.selector, p.labels));
    for (const p of mine) out.push({ ip: p.ip, names: searchForms(svc.metadata.name, ns, domain) });
    if (spec.clusterIP !== 'None') continue;
    for (const p of mine.filter((x) => x.subdomain === svc.metadata.name)) {
      out.push({ ip: p.ip, names: searchForms(`${p.hostname}.${svc.metadata.name}`, ns, domain) });
    }
  }
  return out;
}

// hostsFile(POD, RECORDS, NS, DOMAIN) -> the pod's /etc/hosts.
function hostsFile(pod, recs, ns, domain) {
  const own = [podFqdn(pod, ns, domain), pod.hostname].filter(Boolean);
  const lines = [
    '# written by kube-run: the names cluster DNS would answer',
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    `${pod.ip}\t${own.join(' ')}`,
    ...recs.map((r) => `${r.ip}\t${r.names.join(' ')}`),
  ];
  return `${lines.join('\n')}\n`;
}

function resolvConf(ns, domain) {
  return [
    '# written by kube-run: names come from /etc/hosts; there is no DNS server',
    `search ${ns}.svc.${domain} svc.${domain} ${domain}`,
    'options ndots:5',
    '',
  ].join('\n');
}

// resolve(NAME, RECORDS, PODS) -> the first address of NAME, or ''.
function resolve(name, recs) {
  const r = recs.find((x) => x.names.includes(name));
  return r ? r.ip : '';
}

module.exports = { selects, records, hostsFile, resolvConf, resolve, podFqdn };
