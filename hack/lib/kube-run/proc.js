// SPDX-License-Identifier: Apache-2.0
'use strict';
// Running programs (podman, ip, nsenter) for kube-run: the only place that
// starts processes.

const { spawn } = require('child_process');

// run(CMD, ARGS, {timeoutMs, input, inherit}) -> Promise<{status, stdout, stderr, timedOut}>
function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: [opts.input === undefined && !opts.inherit ? 'ignore' : (opts.inherit ? 'inherit' : 'pipe'), opts.inherit ? 'inherit' : 'pipe', opts.inherit ? 'inherit' : 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    if (!opts.inherit) {
      child.stdout.on('data', (d) => { stdout += d; });
      child.stderr.on('data', (d) => { stderr += d; });
    }
    if (opts.input !== undefined) child.stdin.end(opts.input);
    const timer = opts.timeoutMs ? setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, opts.timeoutMs) : null;
    child.on('error', (e) => { if (timer) clearTimeout(timer); reject(new Error(`cannot run ${cmd}: ${e.message}`)); });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ status: code === null ? 128 + (signal === 'SIGKILL' ? 9 : 15) : code, stdout, stderr, timedOut });
    });
  });
}

// must(CMD, ARGS, OPTS) -> stdout, or an error naming the command and its message.
async function must(cmd, args, opts = {}) {
  const r = await run(cmd, args, opts);
  if (r.status !== 0) {
    const msg = (r.stderr || r.stdout).trim().split('\n').slice(-5).join('\n');
    throw new Error(`${cmd} ${args.slice(0, 3).join(' ')} failed (exit ${r.status}${r.timedOut ? ', timed out' : ''}): ${msg}`);
  }
  return r.stdout;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

module.exports = { run, must, sleep };
