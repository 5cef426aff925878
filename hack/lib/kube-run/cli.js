// SPDX-License-Identifier: Apache-2.0
'use strict';
// kube-run's command line. See `hack/kube-run --help` and hack/man/kube-run.1.

const fs = require('fs');
const path = require('path');
const { parseManifest } = require('./manifest');
const { formatNotHonoured, notHonoured } = require('./honoured');
const { planApply, planScale, summary } = require('./plan');
const stateLib = require('./state');

const USAGE = `Usage: kube-run [--state DIR] COMMAND [ARGS]

Runs the objects of a rendered Helm chart (helm template output) on this
host's podman, as helm install/upgrade and the Kubernetes controllers would:
hooks in Helm's order, StatefulSets with their pods, Jobs to completion,
Services as the names cluster DNS would give. No API server is involved.

Commands:
  apply -f FILE        install the release, or upgrade it if installed
                       (pre/post hooks, rolling updates, scaling, removals)
  render [--helm PATH] -- RELEASE CHART [HELM TEMPLATE ARGS...]
                       helm template --dry-run=server against the objects
                       kube-run has applied, so the chart's lookup calls see
                       them as on helm upgrade (kept Secrets stay the same);
                       prints the manifest for apply
  plan -f FILE         print what apply would do, as JSON; runs nothing
  unsupported -f FILE  list the fields of FILE that kube-run does not honour
  scale statefulset/NAME --replicas N
                       as kubectl scale (scale-in runs the preStop hooks)
  delete pod/NAME      delete a pod; its StatefulSet starts it again
  test                 run the release's helm test hooks (exit status: theirs)
  run-cronjob NAME     run one Job from CronJob NAME now; print its logs
  exec POD [-c CONTAINER] -- CMD...
                       run CMD in a container of POD (stdin passed through)
  logs POD|job/NAME [-c CONTAINER]
                       logs of a running or deleted pod's container, or of
                       the last pod of a Job
  get                  the pods: name, address, phase, owner, images
  ip NAME              the address NAME resolves to inside the cluster
                       (a pod, a Service or a pod's DNS name)
  netns                path of a network namespace on the cluster network,
                       for clients (nsenter --net=PATH ssh ...)
  uninstall [--now] [--purge]
                       stop everything (preStop hooks unless --now); --purge
                       also deletes the state directory with the volumes

Options:
  --state DIR            state directory of the release (default: $KUBE_RUN_STATE,
                         else /var/lib/kube-run); one release per directory
  --cluster-domain NAME  DNS domain of the cluster (default cluster.local)
  -h, --help             show this help

podman runs with the project's settings (images/podman/containers.conf)
unless CONTAINERS_CONF is set, and the machine's own storage. Needs root.
`;

function die(msg, code = 1) {
  process.stderr.write(`kube-run: ${msg}\n`);
  process.exit(code);
}

function loadYaml() {
  const candidates = ['yaml', path.join(__dirname, '../../../.tools/node/node_modules/yaml')];
  for (const c of candidates) {
    try { return require(c); } catch (e) { /* next */ }
  }
  return die('the npm package yaml is missing: run hack/deps/helm.sh (it installs it under .tools/node)');
}

function readObjects(file) {
  if (!file) die('-f FILE is required (helm template output; - for stdin)', 2);
  const text = file === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(file, 'utf8');
  return parseManifest(text, loadYaml());
}

// parse(ARGV) -> {opts, cmd, rest}
function parse(argv) {
  const opts = { state: process.env.KUBE_RUN_STATE || '/var/lib/kube-run', domain: '' };
  const rest = [];
  let cmd = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') { rest.push(...argv.slice(i)); break; }
    if (a === '-h' || a === '--help') { process.stdout.write(USAGE); process.exit(0); }
    if (a === '--state') opts.state = argv[++i];
    else if (a.startsWith('--state=')) opts.state = a.slice(8);
    else if (a === '--cluster-domain') opts.domain = argv[++i];
    else if (a === '-f') opts.file = argv[++i];
    else if (a === '-c') opts.container = argv[++i];
    else if (a === '--replicas') opts.replicas = argv[++i];
    else if (a.startsWith('--replicas=')) opts.replicas = a.slice(11);
    else if (a === '--helm') opts.helm = argv[++i];
    else if (a === '--now') opts.now = true;
    else if (a === '--purge') opts.purge = true;
    else if (a.startsWith('-')) die(`unknown option '${a}'; try kube-run --help`, 2);
    else if (!cmd) cmd = a;
    else rest.push(a);
  }
  if (!cmd) die('no command given; try kube-run --help', 2);
  if (!opts.state) die('--state needs a directory', 2);
  return { opts, cmd, rest };
}

function usePodmanDefaults() {
  const conf = path.join(__dirname, '../../../images/podman');
  if (!process.env.CONTAINERS_CONF) process.env.CONTAINERS_CONF = path.join(conf, 'containers.conf');
}

function runner(opts) {
  // required here: the pure commands must not need it
  const { Runner } = require('./runner');
  if (process.getuid && process.getuid() !== 0) die('needs root (podman pods, network namespaces, mounts)');
  usePodmanDefaults();
  return new Runner(opts.state, { domain: opts.domain || undefined });
}

function splitRef(ref, kind) {
  const m = String(ref || '').match(/^(?:([a-z]+)\/)?([a-z0-9.-]+)$/);
  if (!m || (m[1] && m[1] !== kind)) die(`expected ${kind}/NAME, got '${ref}'`, 2);
  return m[2];
}

function printPlanSummary(plan) {
  const n = plan.notHonoured.length;
  process.stderr.write(`kube-run: ${plan.phase} of namespace ${plan.namespace}; ${n} field(s) not honoured (kube-run unsupported -f FILE lists them)\n`);
}

function helmBinary(opts) {
  if (opts.helm) return opts.helm;
  if (process.env.HELM) return process.env.HELM;
  const local = path.join(__dirname, '../../../.tools/bin/helm');
  return fs.existsSync(local) ? local : 'helm';
}

const commands = {
  async render({ opts, rest }) {
    const args = rest[0] === '--' ? rest.slice(1) : rest;
    if (args.length < 2) die('render needs -- RELEASE CHART [helm template args]', 2);
    const { serve, kubeconfig } = require('./apiserver');
    const { run } = require('./proc');
    const state = stateLib.load(opts.state);
    // as Helm left them in a cluster: owned by the release
    const owned = (obj) => obj && {
      ...obj,
      metadata: {
        ...obj.metadata,
        annotations: { ...(obj.metadata.annotations || {}), 'meta.helm.sh/release-name': args[0], 'meta.helm.sh/release-namespace': state.namespace },
      },
    };
    const find = (kind, ns, name) => (ns === state.namespace
      ? owned(state.objects[`${kind}/${name}`] || state.hooks[`${kind}/${name}`]) || null : null);
    const api = await serve(find);
    const tmp = fs.mkdtempSync(path.join(require('os').tmpdir(), 'kube-run-'));
    try {
      const kc = path.join(tmp, 'kubeconfig');
      fs.writeFileSync(kc, kubeconfig(api.port, state.namespace || 'default'), { mode: 0o600 });
      const r = await run(helmBinary(opts), ['template', ...args, '--kubeconfig', kc,
        '--dry-run=server', '--disable-openapi-validation']);
      if (r.status !== 0) die(`helm template failed: ${r.stderr.trim()}`);
      process.stdout.write(r.stdout);
    } finally {
      api.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  },

  plan({ opts }) {
    const objects = readObjects(opts.file);
    const state = stateLib.load(opts.state);
    const ctx = { stateDir: path.resolve(opts.state), prefix: stateLib.prefixFor(opts.state) };
    process.stdout.write(`${JSON.stringify(summary(planApply(objects, state, ctx)), null, 1)}\n`);
  },

  unsupported({ opts }) {
    const lines = formatNotHonoured(notHonoured(readObjects(opts.file)));
    process.stdout.write(lines.length ? `${lines.join('\n')}\n` : '');
  },

  async apply({ opts }) {
    const objects = readObjects(opts.file);
    const r = runner(opts);
    const plan = planApply(objects, r.state, r.ctx);
    printPlanSummary(plan);
    r.state.namespace = plan.namespace;
    r.save();
    await r.execute(plan.actions);
    r.state.installed = true;
    r.save();
    process.stderr.write(`kube-run: ${plan.phase} done\n`);
  },

  async scale({ opts, rest }) {
    const name = splitRef(rest[0], 'statefulset');
    const n = Number(opts.replicas);
    if (!Number.isInteger(n) || n < 0) die(`--replicas needs a whole number, got '${opts.replicas}'`, 2);
    const r = runner(opts);
    await r.execute(planScale(r.statefulSet(name), n, r.state, r.ctx));
  },

  async delete({ opts, rest }) {
    const name = splitRef(rest[0], 'pod');
    const r = runner(opts);
    const p = r.state.pods[name];
    if (!p) die(`no pod ${name}`);
    await r.deletePods([name], 'deleted by request');
    await r.reconcile(p.owner);
  },

  async test({ opts }) {
    const r = runner(opts);
    const { hookOf } = require('./manifest');
    const { podPlan } = require('./pods');
    const tests = Object.values(r.state.hooks).filter((o) => o.kind === 'Pod' && hookOf(o).events.includes('test'));
    if (!tests.length) die('the release has no test hooks');
    let failed = 0;
    for (const t of tests) {
      if (r.state.pods[t.metadata.name]) await r.deletePod(t.metadata.name, { now: true });
      const pod = podPlan({ name: t.metadata.name, labels: t.metadata.labels, owner: `Pod/${t.metadata.name}`, spec: t.spec }, r.ctx);
      const res = await r.runPodToEnd(pod);
      process.stdout.write(`TEST SUITE: ${t.metadata.name}\nPhase: ${res.code === 0 ? 'Succeeded' : 'Failed'}\n${res.logs}`);
      if (res.code !== 0) failed += 1;
    }
    process.exit(failed ? 1 : 0);
  },

  async 'run-cronjob'({ opts, rest }) {
    const r = runner(opts);
    const cron = r.state.objects[`CronJob/${rest[0]}`];
    if (!cron) die(`no CronJob ${rest[0]}`);
    const n = ((r.state.jobs[`cron:${rest[0]}`] || {}).runs || 0) + 1;
    r.state.jobs[`cron:${rest[0]}`] = { runs: n };
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: `${rest[0]}-manual-${n}` }, spec: cron.spec.jobTemplate.spec };
    let res;
    try {
      res = await r.runJob(job);
    } catch (e) {
      process.stdout.write(`${(r.state.jobs[job.metadata.name] || {}).logs || ''}`);
      die(e.message.split('\n')[0]);
    }
    process.stdout.write(res.logs);
  },

  async exec({ opts, rest }) {
    const r = runner(opts);
    const [pod, ...cmd] = rest;
    const p = r.state.pods[pod];
    if (!p) die(`no running pod ${pod}`);
    const args = cmd[0] === '--' ? cmd.slice(1) : cmd;
    if (!args.length) die('exec needs a command after --', 2);
    const c = opts.container ? `${p.podmanName}-${opts.container}` : p.containers[0];
    const { run } = require('./proc');
    const res = await run('podman', ['exec', '-i', c, ...args], { inherit: true });
    process.exit(res.status);
  },

  async logs({ opts, rest }) {
    const r = runner(opts);
    const pod = rest[0];
    const p = r.state.pods[pod];
    const { run } = require('./proc');
    if (p) {
      const c = opts.container ? `${p.podmanName}-${opts.container}` : p.containers[0];
      process.exit((await run('podman', ['logs', c], { inherit: true })).status);
    }
    // a Job's name: the logs of its last pod
    const job = r.state.jobs[String(pod).replace(/^job\//, '')];
    const dir = path.join(r.dir, 'logs', job && job.pod ? job.pod : pod || '');
    if (!pod || !fs.existsSync(dir)) die(`no pod ${pod}, running or deleted`);
    const files = fs.readdirSync(dir).filter((f) => !opts.container || f === `${opts.container}.log`);
    for (const f of files) process.stdout.write(fs.readFileSync(path.join(dir, f)));
  },

  async get({ opts }) {
    const r = runner(opts);
    const { run } = require('./proc');
    for (const [name, p] of Object.entries(r.state.pods)) {
      const images = [];
      for (const c of p.containers) images.push((await run('podman', ['inspect', '--format', '{{.ImageName}}', c])).stdout.trim());
      process.stdout.write(`${name}\t${p.ip}\t${(await r.isReady(name)) ? 'Ready' : p.phase}\t${p.owner}\t${images.join(',')}\n`);
    }
  },

  async ip({ opts, rest }) {
    const r = runner(opts);
    const ip = r.resolve(rest[0] || '');
    if (!ip) die(`'${rest[0]}' resolves to nothing in the cluster`);
    process.stdout.write(`${ip}\n`);
  },

  async netns({ opts }) {
    const r = runner(opts);
    await r.ensureNetwork();
    process.stdout.write(`${r.clientNetns()}\n`);
  },

  async uninstall({ opts }) {
    const r = runner(opts);
    await r.teardown({ now: !!opts.now });
    if (opts.purge) fs.rmSync(r.dir, { recursive: true, force: true });
    else {
      r.state = { ...stateLib.emptyState(), nextIp: r.state.nextIp };
      r.save();
    }
  },
};

async function main(argv) {
  const { opts, cmd, rest } = parse(argv);
  const fn = commands[cmd];
  if (!fn) die(`unknown command '${cmd}'; try kube-run --help`, 2);
  try {
    await fn({ opts, rest });
  } catch (e) {
    die(e.message);
  }
}

module.exports = { main, parse };
