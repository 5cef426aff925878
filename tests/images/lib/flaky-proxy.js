#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// An HTTP forward proxy that makes a Debian mirror flaky on purpose, so tests
// can watch apt and mmdebstrap cope with it.
//
//   flaky-proxy.js PORT_FILE LOG_FILE [--fail-first-debs N] [--always-fail REGEX]
//
// Listens on 127.0.0.1 (a free port, written to PORT_FILE). Every request is
// forwarded to its origin, except:
//   --fail-first-debs N  the first request for each of the first N distinct
//                        .deb URLs gets "503 Service Unavailable"
//   --always-fail REGEX  every request whose URL matches REGEX gets 503
// Each refused request is appended to LOG_FILE as "503 URL".
'use strict';
const fs = require('fs');
const http = require('http');

const [portFile, logFile, ...rest] = process.argv.slice(2);
let failFirstDebs = 0;
let alwaysFail = null;
for (let i = 0; i < rest.length; i += 2) {
  if (rest[i] === '--fail-first-debs') failFirstDebs = Number(rest[i + 1]);
  else if (rest[i] === '--always-fail') alwaysFail = new RegExp(rest[i + 1]);
  else throw new Error(`unknown argument ${rest[i]}`);
}
const refusedOnce = new Set();

function shouldRefuse(url) {
  if (alwaysFail && alwaysFail.test(url)) return true;
  if (url.endsWith('.deb') && !refusedOnce.has(url) && refusedOnce.size < failFirstDebs) {
    refusedOnce.add(url);
    return true;
  }
  return false;
}

const server = http.createServer((req, res) => {
  if (shouldRefuse(req.url)) {
    fs.appendFileSync(logFile, `503 ${req.url}\n`);
    res.writeHead(503, { 'Content-Type': 'text/plain' });
    res.end('refused by flaky-proxy\n');
    return;
  }
  const upstream = http.request(req.url, { method: req.method, headers: req.headers }, (up) => {
    res.writeHead(up.statusCode, up.headers);
    up.pipe(res);
  });
  upstream.on('error', (err) => {
    res.writeHead(502);
    res.end(`flaky-proxy: ${err.message}\n`);
  });
  req.pipe(upstream);
});

server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(portFile, String(server.address().port));
});
