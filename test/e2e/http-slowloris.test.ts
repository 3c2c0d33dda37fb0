// Slow-header clients at max_connections, against dist/claw.mjs on this Node and on Bun (when installed): one
// peer holding every slot with connections that trickle header lines, reopening each as it is cut, must not keep
// a legitimate client out (docs/transports.md, HTTP "Limits": the oldest connection with no request in progress
// gives way at the cap).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { ROOT } from './helpers/claw-process.ts';
import { sleep } from './helpers/e2e-util.ts';
import { rpc, startHttpClaw } from './helpers/http-claw.ts';

const MAX = 16;
const RUNTIMES: [string, string | undefined][] = [
  ['this node', undefined],
  ['bun', join(ROOT, '.build/runtimes/bun/node_modules/.bin/bun')],
];

/** MAX connections trickling a header line every 100 ms, each reopened when the server cuts it. */
function attacker(url: string) {
  const u = new URL(url);
  const open = new Set<net.Socket>();
  let stopped = false;
  let opened = 0;
  const one = () => {
    if (stopped) return;
    opened++;
    const s = net.connect(Number(u.port), u.hostname);
    open.add(s);
    s.on('error', () => {});
    s.on('connect', () => s.write('POST /ckp HTTP/1.1\r\nHost: 127.0.0.1\r\n'));
    s.on('close', () => {
      open.delete(s);
      setTimeout(one, 10);
    });
  };
  for (let i = 0; i < MAX; i++) one();
  const drip = setInterval(() => {
    for (const s of open) if (s.writable) s.write('X-Slow: 1\r\n');
  }, 100);
  return {
    opened: () => opened,
    stop() {
      stopped = true;
      clearInterval(drip);
      for (const s of open) s.destroy();
    },
  };
}

for (const [name, bin] of RUNTIMES) {
  const present = bin === undefined || existsSync(bin);
  if (!present) console.log(`  (slowloris on ${name}: skipped, ${bin} missing: bash scripts/install-runtimes.sh)`);
  (present ? test : test.skip)(`http on ${name}: ${MAX} trickling connections at max_connections ${MAX}; a legitimate client still gets 200s`, async () => {
    const h = await startHttpClaw(
      `transports:
  - listen: http://127.0.0.1:0/ckp
    http: { limits: { max_connections: ${MAX}, headers_timeout_ms: 2000, requests_per_minute: 0 } }
`,
      { runtime: bin },
    );
    const a = attacker(h.url);
    try {
      await sleep(500); // every slot taken, headers still arriving
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await rpc(h.url, { jsonrpc: '2.0', id: i, method: 'claw.status' }, { timeoutMs: 3000 }).catch((e: Error) => ({ status: e.message }));
        statuses.push(r.status as number);
        await sleep(300);
      }
      // Before: 503 on every one, for as long as the peer kept reopening.
      assert.equal(statuses, [200, 200, 200, 200, 200, 200], `statuses ${statuses.join(',')}; attacker opened ${a.opened()}`);
      assert.ok(a.opened() > MAX, 'the attacker was cut and reopened');
    } finally {
      a.stop();
      await h.stop();
    }
  });
}

test.run();
