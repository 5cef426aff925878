// SPDX-License-Identifier: Apache-2.0
'use strict';
// Carries out kube-run's plans with podman and iproute2: one podman pod per
// Kubernetes pod, in its own network namespace on a bridge of the release,
// with /etc/hosts carrying the names cluster DNS would answer.

const fs = require('fs');
const path = require('path');
const { run, must, sleep } = require('./proc');
const stateLib = require('./state');
const dns = require('./dns');
const { configFiles, envLines, claimDir } = require('./pods');
const { planReconcile, jobPod, replicasOf } = require('./plan');
const { hookOf } = require('./manifest');

const BRIDGE_NS = 'net';
const CLIENT_NS = 'client';
const CLIENT_IP = stateLib.ipFor(2);
const READY_TIMEOUT_S = 300;

class Runner {
  constructor(stateDir, { log = (m) => process.stderr.write(`kube-run: ${m}\n`), domain } = {}) {
    this.dir = path.resolve(stateDir);
    this.state = stateLib.load(this.dir);
    if (domain) this.state.domain = domain;
    this.prefix = stateLib.prefixFor(this.dir);
    this.ctx = { stateDir: this.dir, prefix: this.prefix };
    this.log = log;
  }

  save() { stateLib.save(this.dir, this.state); }

  lookup(kind, name) {
    const key = `${kind}/${name}`;
    return this.state.objects[key] || this.state.hooks[key] || null;
  }

  netns(name) { return `${this.prefix}${name}`; }

  // ---- network --------------------------------------------------------
  async ensureNetwork() {
    const br = this.netns(BRIDGE_NS);
    const existing = (await must('ip', ['netns', 'list'])).split('\n').map((l) => l.split(' ')[0]);
    if (existing.includes(br)) return;
    await must('ip', ['netns', 'add', br]);
    await must('ip', ['-n', br, 'link', 'set', 'lo', 'up']);
    await must('ip', ['-n', br, 'link', 'add', 'br0', 'type', 'bridge']);
    await must('ip', ['-n', br, 'link', 'set', 'br0', 'up']);
    const client = this.netns(CLIENT_NS);
    await must('ip', ['netns', 'add', client]);
    await this.plugIn(client, 'vclient', CLIENT_IP);
  }

  // plugIn(NETNS, VETH, IP): a veth from NETNS's eth0 to the bridge.
  async plugIn(ns, veth, ip) {
    const br = this.netns(BRIDGE_NS);
    await must('ip', ['-n', br, 'link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    await must('ip', ['-n', br, 'link', 'set', veth, 'master', 'br0', 'up']);
    await must('ip', ['-n', ns, 'addr', 'add', `${ip}/16`, 'dev', 'eth0']);
    await must('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
    await must('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  }

  clientNetns() { return `/run/netns/${this.netns(CLIENT_NS)}`; }

  // ---- names ----------------------------------------------------------
  services() {
    return Object.values(this.state.objects).filter((o) => o.kind === 'Service');
  }

  podRecords() {
    return Object.entries(this.state.pods).map(([name, p]) => ({ name, ...p }));
  }

  records() {
    return dns.records(this.podRecords(), this.services(), this.state.namespace, this.state.domain);
  }

  resolve(name) {
    const pod = this.state.pods[name];
    if (pod) return pod.ip;
    return dns.resolve(name, this.records());
  }

  writeHosts() {
    const recs = this.records();
    for (const p of this.podRecords()) {
      if (!fs.existsSync(p.dir)) continue;
      // rewritten in place: containers bind-mount this very file
      fs.writeFileSync(path.join(p.dir, 'hosts'), dns.hostsFile(p, recs, this.state.namespace, this.state.domain));
    }
  }

  // ---- volumes --------------------------------------------------------
  writeConfigVolume(pod, vp) {
    const [kind, name] = vp.source.split('/');
    const obj = this.lookup(kind, name);
    fs.mkdirSync(vp.hostPath, { recursive: true });
    if (!obj) {
      if (vp.optional) return;
      throw new Error(`pod ${pod.name}: ${kind} ${name} (volume ${vp.name}) does not exist; Kubernetes would keep the pod from starting`);
    }
    const files = configFiles(vp, obj);
    const keep = new Set(files.map((f) => f.path));
    for (const old of fs.readdirSync(vp.hostPath)) if (!keep.has(old)) fs.rmSync(path.join(vp.hostPath, old), { force: true });
    for (const f of files) {
      const p = path.join(vp.hostPath, f.path);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      // written in place, so that containers see the new content at once
      fs.writeFileSync(p, f.content);
      fs.chmodSync(p, f.mode);
    }
  }

  async prepareVolumes(pod) {
    for (const vp of pod.volumes) {
      if (vp.type === 'pvc') fs.mkdirSync(vp.hostPath, { recursive: true, mode: 0o755 });
      else if (vp.type === 'emptyDir') {
        fs.mkdirSync(vp.hostPath, { recursive: true, mode: 0o755 });
        if (vp.medium === 'Memory') await must('mount', ['-t', 'tmpfs', '-o', 'mode=0755', 'tmpfs', vp.hostPath]);
      } else if (vp.type === 'hostPath') {
        if (vp.hostPathType === 'DirectoryOrCreate') fs.mkdirSync(vp.hostPath, { recursive: true });
        else if (vp.hostPathType && !fs.existsSync(vp.hostPath)) {
          throw new Error(`pod ${pod.name}: hostPath ${vp.hostPath} (type ${vp.hostPathType}) does not exist`);
        }
      } else this.writeConfigVolume(pod, vp);
    }
    for (const sp of pod.subPaths) fs.mkdirSync(sp, { recursive: true });
  }

  // A changed ConfigMap or Secret reaches the files of running pods (the
  // kubelet does this within about a minute; kube-run at once).
  refreshConfig(key) {
    for (const p of this.podRecords()) {
      for (const vp of p.volumes || []) {
        if (vp.source === key && fs.existsSync(p.dir)) this.writeConfigVolume(p, vp);
      }
    }
  }

  // ---- pods -----------------------------------------------------------
  // createPod(POD): sandbox, volumes, init containers, containers with
  // their postStart hooks. A pod that fails to start is removed again (its
  // logs kept), so that the next apply tries anew.
  async createPod(pod) {
    if (this.state.pods[pod.name]) throw new Error(`pod ${pod.name} exists already`);
    try {
      await this.startPod(pod);
    } catch (e) {
      await this.deletePod(pod.name, { now: true }).catch(() => {});
      throw e;
    }
  }

  async startPod(pod) {
    const ip = stateLib.allocateIp(this.state);
    const veth = `v${this.state.nextIp - 1}`;
    this.state.pods[pod.name] = {
      owner: pod.owner, templateHash: pod.templateHash, ip, veth, hostname: pod.hostname,
      subdomain: pod.subdomain, labels: pod.labels, dir: pod.dir, podmanName: pod.podmanName,
      volumes: pod.volumes, containers: pod.containers.map((c) => c.podmanName),
      initContainers: pod.initContainers.map((c) => c.podmanName),
      preStop: Object.fromEntries(pod.containers.filter((c) => c.preStop).map((c) => [c.podmanName, c.preStop])),
      readiness: pod.containers.filter((c) => c.readiness).map((c) => c.readiness),
      grace: pod.grace, phase: 'Pending', created: new Date().toISOString(),
    };
    this.save();
    fs.rmSync(pod.dir, { recursive: true, force: true });
    fs.mkdirSync(path.join(pod.dir, 'env'), { recursive: true, mode: 0o700 });
    await this.prepareVolumes(pod);
    fs.writeFileSync(path.join(pod.dir, 'resolv.conf'), dns.resolvConf(this.state.namespace, this.state.domain));
    this.writeHosts();
    const envPod = { name: pod.name, namespace: this.state.namespace, ip };
    for (const c of [...pod.initContainers, ...pod.containers]) {
      fs.writeFileSync(c.envFile, envLines(c, envPod, (k, n) => this.lookup(k, n)).map((l) => `${l}\n`).join(''), { mode: 0o600 });
    }
    await this.startSandbox(pod, ip, veth);
    for (const c of pod.initContainers) await this.runToCompletion(pod, c);
    for (const c of pod.containers) {
      await this.podman(c.create);
      await this.podman(['start', c.podmanName]);
      if (c.postStart) await this.hook(pod.name, c, 'postStart', c.postStart, pod.grace);
    }
    this.state.pods[pod.name].phase = 'Running';
    this.save();
    this.log(`pod ${pod.name}: started (${ip})`);
  }

  async startSandbox(pod, ip, veth) {
    await this.podman(pod.create);
    await this.podman(['pod', 'start', pod.podmanName]);
    const pid = (await this.podman(['inspect', '--format', '{{.State.Pid}}', `${pod.podmanName}-infra`])).trim();
    await must('ip', ['netns', 'attach', this.netns(pod.name), pid]);
    await this.plugIn(this.netns(pod.name), veth, ip);
  }

  async runToCompletion(pod, c) {
    await this.podman(c.create);
    await this.podman(['start', c.podmanName]);
    const code = Number((await this.podman(['wait', c.podmanName])).trim());
    if (code !== 0) {
      const logs = await run('podman', ['logs', c.podmanName]);
      throw new Error(`pod ${pod.name}: init container ${c.name} exited with status ${code}:\n${(logs.stdout + logs.stderr).trim().split('\n').slice(-20).join('\n')}`);
    }
  }

  // hook(POD, C, WHICH, CMD, GRACE): a lifecycle hook, as `podman exec`.
  async hook(podName, c, which, cmd, graceS) {
    const r = await run('podman', ['exec', c.podmanName || c, ...cmd], { timeoutMs: Math.max(graceS, 1) * 1000 });
    const out = `${r.stdout}${r.stderr}`.trim();
    if (out) this.log(`pod ${podName}: ${which} ${cmd.join(' ')}:\n${out.replace(/^/gm, '  | ')}`);
    if (r.status !== 0) {
      const msg = `pod ${podName}: ${which} hook ${cmd.join(' ')} failed (exit ${r.status}${r.timedOut ? ', killed at the grace period' : ''})`;
      if (which === 'postStart') throw new Error(msg);
      this.log(msg);
    }
  }

  async podman(args) {
    try {
      return await must('podman', args);
    } catch (e) {
      if (/image not known|no such image|short-name/i.test(e.message)) {
        throw new Error(`${e.message}\nkube-run never pulls: build or load the image into podman's local storage first (images/build-images)`);
      }
      throw e;
    }
  }

  // deletePod(NAME, {now}): preStop hooks, SIGTERM after them, SIGKILL at
  // the end of the grace period; the containers' logs and exit statuses are
  // kept under logs/.
  async deletePod(name, { now = false } = {}) {
    const p = this.state.pods[name];
    if (!p) return;
    const start = Date.now();
    if (!now) {
      await Promise.all(Object.entries(p.preStop || {}).map(([c, cmd]) => this.hook(name, c, 'preStop', cmd, p.grace)));
    }
    const left = now ? 0 : Math.max(2, Math.ceil(p.grace - (Date.now() - start) / 1000));
    const logDir = path.join(this.dir, 'logs', name);
    fs.mkdirSync(logDir, { recursive: true });
    for (const c of p.containers) {
      await run('podman', ['stop', '-t', String(left), c]);
      const code = (await run('podman', ['inspect', '--format', '{{.State.ExitCode}}', c])).stdout.trim();
      const logs = await run('podman', ['logs', c]);
      fs.writeFileSync(path.join(logDir, `${c.slice(p.podmanName.length + 1)}.log`), logs.stdout + logs.stderr);
      if (code !== '') this.log(`pod ${name}: container ${c.slice(p.podmanName.length + 1)} exited with status ${code}`);
    }
    await this.removeSandbox(name, p);
    this.log(`pod ${name}: deleted after ${((Date.now() - start) / 1000).toFixed(1)} s`);
  }

  async removeSandbox(name, p) {
    await run('podman', ['pod', 'rm', '-f', p.podmanName]);
    await run('ip', ['netns', 'del', this.netns(name)]);
    for (const vp of p.volumes || []) {
      if (vp.type === 'emptyDir' && vp.medium === 'Memory') await run('umount', [vp.hostPath]);
    }
    fs.rmSync(p.dir, { recursive: true, force: true });
    delete this.state.pods[name];
    this.save();
    this.writeHosts();
  }

  async deletePods(names, reason, opts) {
    if (names.length) this.log(`deleting ${names.join(', ')} (${reason})`);
    await Promise.all(names.map((n) => this.deletePod(n, opts)));
  }

  // ---- readiness ------------------------------------------------------
  async tcpOpen(ip, port) {
    const r = await run('nsenter', [`--net=${this.clientNetns()}`, 'bash', '-c', `exec 3<>/dev/tcp/${ip}/${port}`], { timeoutMs: 3000 });
    return r.status === 0;
  }

  async isReady(name) {
    const p = this.state.pods[name];
    if (!p || p.phase !== 'Running') return false;
    for (const c of p.containers) {
      const r = await run('podman', ['inspect', '--format', '{{.State.Running}}', c]);
      if (r.stdout.trim() !== 'true') return false;
    }
    for (const rp of p.readiness || []) if (!(await this.tcpOpen(p.ip, rp.port))) return false;
    return true;
  }

  async waitReady(name, timeoutS = READY_TIMEOUT_S) {
    const end = Date.now() + timeoutS * 1000;
    while (Date.now() < end) {
      if (await this.isReady(name)) return;
      await sleep(500);
    }
    throw new Error(`pod ${name} did not become ready within ${timeoutS} s (see kube-run logs ${name})`);
  }

  // ---- jobs -----------------------------------------------------------
  // runJob(JOB): pods one after another until one succeeds, at most
  // backoffLimit+1, within activeDeadlineSeconds. Returns the last pod's
  // logs; throws when the Job fails.
  async runJob(job, { hook = false } = {}) {
    const name = job.metadata.name;
    const h = hookOf(job);
    const key = `Job/${name}`;
    for (const [pn, p] of Object.entries(this.state.pods)) if (p.owner === key) await this.deletePod(pn, { now: true });
    const rec = this.state.jobs[name] || { runs: 0 };
    rec.runs += 1;
    rec.status = 'Running';
    this.state.jobs[name] = rec;
    this.save();
    const spec = job.spec || {};
    const attempts = (spec.backoffLimit === undefined ? 6 : spec.backoffLimit) + 1;
    const deadline = spec.activeDeadlineSeconds ? Date.now() + spec.activeDeadlineSeconds * 1000 : Infinity;
    let last = { code: -1, logs: '' };
    for (let a = 0; a < attempts; a++) {
      if (a > 0) await sleep(Math.min(10000 * 2 ** (a - 1), 360000));
      const pod = jobPod(job, rec.runs, a, this.ctx);
      this.log(`job ${name}: pod ${pod.name} (attempt ${a + 1} of ${attempts})`);
      rec.pod = pod.name;
      last = await this.runPodToEnd(pod, deadline);
      if (last.code === 0) break;
      if (Date.now() >= deadline) break;
    }
    rec.status = last.code === 0 ? 'Complete' : 'Failed';
    rec.logs = last.logs;
    this.save();
    if (last.code !== 0) {
      const why = Date.now() >= deadline ? 'DeadlineExceeded' : 'BackoffLimitExceeded';
      throw new Error(`job ${name} failed (${why}, last exit ${last.code})${hook ? `; helm stops the ${h.events.join('/')} here` : ''}:\n${last.logs.trim().split('\n').slice(-20).join('\n')}`);
    }
    this.log(`job ${name}: complete`);
    return last;
  }

  // runPodToEnd(POD, DEADLINE) -> {code, logs}: runs a pod whose containers
  // end by themselves, then removes it (logs kept).
  async runPodToEnd(pod, deadline = Infinity) {
    try {
      await this.createPod(pod);
    } catch (e) {
      await this.deletePod(pod.name, { now: true });
      return { code: 1, logs: e.message };
    }
    let code = 0;
    let logs = '';
    for (const c of pod.containers) {
      const left = deadline === Infinity ? 0 : Math.max(1, deadline - Date.now());
      const r = await run('podman', ['wait', c.podmanName], left ? { timeoutMs: left } : {});
      const cc = r.timedOut ? 124 : Number(r.stdout.trim());
      if (cc !== 0 && code === 0) code = cc;
      const l = await run('podman', ['logs', c.podmanName]);
      logs += l.stdout + l.stderr;
    }
    await this.deletePod(pod.name, { now: true });
    return { code, logs };
  }

  // ---- actions --------------------------------------------------------
  async execute(actions) {
    for (const a of actions) await this.step(a);
  }

  async step(a) {
    switch (a.op) {
      case 'network': return this.ensureNetwork();
      case 'apply': return this.apply(a);
      case 'run-job': return this.runJob(a.object, { hook: a.hook });
      case 'create-pod':
        await this.createPod(a.pod);
        if (a.waitReady) await this.waitReady(a.pod.name);
        return undefined;
      case 'delete-pods': return this.deletePods(a.names, a.reason);
      case 'replace-pod':
        this.log(`rolling ${a.name}: its template changed`);
        await this.deletePod(a.name);
        await this.createPod(a.pod);
        return this.waitReady(a.name);
      case 'forget':
        delete this.state.objects[a.key];
        this.save();
        this.writeHosts();
        return undefined;
      case 'skip':
        this.log(`${a.key}: not run (${a.reason})`);
        return undefined;
      default: throw new Error(`unknown action ${a.op}`);
    }
  }

  apply(a) {
    const store = a.hook ? this.state.hooks : this.state.objects;
    store[a.key] = a.object;
    this.save();
    const kind = a.object.kind;
    if (kind === 'ConfigMap' || kind === 'Secret') this.refreshConfig(a.key);
    else if (kind === 'Service') this.writeHosts();
    else if (kind === 'PersistentVolumeClaim') fs.mkdirSync(claimDir(this.ctx, a.object.metadata.name), { recursive: true, mode: 0o755 });
  }

  // After a pod of a StatefulSet went away: its controller makes it again.
  async reconcile(ownerKey) {
    const sts = this.state.objects[ownerKey];
    if (!sts || sts.kind !== 'StatefulSet') return;
    await this.execute(planReconcile(sts, this.state, this.ctx));
  }

  statefulSet(name) {
    const sts = this.state.objects[`StatefulSet/${name}`];
    if (!sts) {
      const known = Object.keys(this.state.objects).filter((k) => k.startsWith('StatefulSet/')).map((k) => k.slice(12));
      throw new Error(`no StatefulSet ${name} (known: ${known.join(', ') || 'none'})`);
    }
    return sts;
  }

  replicas(name) { return replicasOf(this.statefulSet(name)); }

  // Everything podman and ip know under this state directory, even what a
  // crashed run left behind.
  async teardown({ now }) {
    await this.deletePods(Object.keys(this.state.pods), 'uninstall', { now });
    const pods = (await run('podman', ['pod', 'ls', '-q', '--filter', `label=kube-run.state=${this.dir}`])).stdout.split('\n').filter(Boolean);
    for (const id of pods) await run('podman', ['pod', 'rm', '-f', id]);
    const names = (await run('ip', ['netns', 'list'])).stdout.split('\n').map((l) => l.split(' ')[0]);
    for (const n of names.filter((x) => x.startsWith(this.prefix))) await run('ip', ['netns', 'del', n]);
  }
}

module.exports = { Runner, CLIENT_IP };
