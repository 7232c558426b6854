// The proved-work solvers' speed (docs/rules.md#proved-work): the page's worker, Node, node:crypto.
//
// node bench/experiments/work-solver.ts — serves web/dist (build it first), runs the worker's search
// on challenges of WORK_BITS bits (18) in headless Chromium (CHROMIUM: its executable, default
// Debian's), and prints hashes per second of each.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { searchNonce } from '../../src/client/index.ts';
import { leadingZeroBits, workMessage } from '../../src/login/proved-work.ts';

const DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));
const BITS = Number(process.env.WORK_BITS ?? 18);
const CHALLENGES = ['w1.a', 'w1.b', 'w1.c', 'w1.d'].map((c) => `${c}.${'x'.repeat(50)}`);

const worker = readdirSync(join(DIST, 'assets')).find((f) => /^work-worker-.*\.js$/.test(f));
if (!worker) throw new Error('no work-worker chunk in web/dist: run npm run build:web');
const server = http.createServer((request, response) => {
  const path = request.url === '/' ? 'index.html' : request.url!.slice(1);
  const type = path.endsWith('.js') ? 'text/javascript' : 'text/html';
  let body: Buffer;
  try {
    body = readFileSync(join(DIST, path));
  } catch {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'content-type': type }).end(body);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium-headless-shell',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu'],
});
const page = await browser.newPage();
await page.goto(`${base}/`);
const inWorker = await page.evaluate(
  async ({ url, challenges, bits }) => {
    let hashes = 0;
    const started = performance.now();
    for (const challenge of challenges) {
      const w = new Worker(url, { type: 'module' });
      const found = await new Promise<{ hashes: number }>((resolve) => {
        w.onmessage = (event) => resolve(event.data);
        w.postMessage({ challenge, bits });
      });
      w.terminate();
      hashes += found.hashes;
    }
    return hashes / ((performance.now() - started) / 1000);
  },
  { url: `${base}/assets/${worker}`, challenges: CHALLENGES, bits: BITS },
);
const subtle = await page.evaluate(async () => {
  const encoder = new TextEncoder();
  const n = 20_000;
  const started = performance.now();
  for (let i = 0; i < n; i++) await crypto.subtle.digest('SHA-256', encoder.encode(`w1.a.xxxxxxxx:${i}`));
  return n / ((performance.now() - started) / 1000);
});
await browser.close();
server.close();

let hashes = 0;
let started = performance.now();
for (const challenge of CHALLENGES)
  hashes += searchNonce({ challenge, bits: BITS }, 0, Number.MAX_SAFE_INTEGER).next;
const nodeSearch = hashes / ((performance.now() - started) / 1000);
hashes = 0;
started = performance.now();
for (const challenge of CHALLENGES)
  for (let n = 0; ; n++) {
    hashes++;
    if (
      leadingZeroBits(
        createHash('sha256')
          .update(workMessage(challenge, n.toString(36)))
          .digest(),
      ) >= BITS
    )
      break;
  }
const nodeCrypto = hashes / ((performance.now() - started) / 1000);
const k = (v: number) => `${Math.round(v / 1000)} k/s`;
console.log(
  `hashes per second, ${BITS} bits × ${CHALLENGES.length}: page's worker in Chromium ${k(inWorker)}; ` +
    `crypto.subtle.digest in Chromium ${k(subtle)}; the same search in Node ${k(nodeSearch)}; ` +
    `node:crypto per hash ${k(nodeCrypto)} (worker ÷ node:crypto ${(inWorker / nodeCrypto).toFixed(2)})`,
);
