// The HTTP transport on every runtime dist/claw.mjs supports (Node 18, 22 and Bun from scripts/install-runtimes.sh,
// skipped with a note when missing): node:http and node:https behave alike enough for a session, the event
// stream, /healthz, a token, and the slow-client cut-offs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { ROOT, initParams } from './helpers/claw-process.ts';
import { sleep } from './helpers/e2e-util.ts';
import { openStream, request, rpc, startHttpClaw } from './helpers/http-claw.ts';

const RUNTIMES: [string, string][] = [
  ['node18', join(ROOT, '.build/runtimes/node18/node_modules/.bin/node')],
  ['node22', join(ROOT, '.build/runtimes/node22/node_modules/.bin/node')],
  ['bun', join(ROOT, '.build/runtimes/bun/node_modules/.bin/bun')],
];
const TOKEN = 'claw-runtime-token-51c0ffee';
const auth = { headers: { authorization: `Bearer ${TOKEN}` } };

function slowClient(url: string, head: string, drip: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port), u.hostname);
    let got = '';
    s.on('data', (c) => (got += c));
    s.on('error', () => {});
    s.write(head);
    const t = setInterval(() => s.write(drip), 150);
    const give = setTimeout(() => s.destroy(), 5000);
    s.on('close', () => {
      clearInterval(t);
      clearTimeout(give);
      resolve(got);
    });
  });
}

for (const [name, bin] of RUNTIMES) {
  const present = existsSync(bin);
  if (!present) console.log(`  (http on ${name}: skipped, ${bin} missing: bash scripts/install-runtimes.sh)`);
  (present ? test : test.skip)(`http on ${name}: a session, heartbeats on the stream, /healthz, a token, slow clients cut off`, async () => {
    const h = await startHttpClaw(
      `heartbeat: { interval_ms: 150 }
transports:
  - listen: http://127.0.0.1:0/ckp
    http: { auth: { bearer_token_refs: [CLAW_HTTP_TOKEN] }, limits: { headers_timeout_ms: 500, request_timeout_ms: 1000 } }
`,
      { runtime: bin, env: { CLAW_HTTP_TOKEN: TOKEN } },
    );
    try {
      assert.is((await rpc(h.url, { jsonrpc: '2.0', id: 1, method: 'claw.status' })).status, 401);
      const s = openStream(h.url, auth.headers);
      assert.is(await s.ready, 200);
      const init = await rpc(h.url, { jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: initParams() }, auth);
      assert.is(init.json.result.protocolVersion, '0.3.0');
      assert.ok(init.headers['claw-session-id']);
      assert.is((await rpc(h.url, { jsonrpc: '2.0', method: 'claw.initialized' }, auth)).status, 202);
      const end = Date.now() + 5000;
      while (s.events.length < 2 && Date.now() < end) await sleep(20);
      assert.ok(s.events.length >= 2, `heartbeats: ${s.events.length}`);
      assert.is(s.events[0].data.method, 'claw.heartbeat');
      s.close();
      const health = await request(h.url.replace(/\/ckp$/, '/healthz'), { method: 'GET' });
      assert.is(health.json.state, 'READY');
      const [headers, body] = await Promise.all([
        slowClient(h.url, 'POST /ckp HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Slow: 1\r\n'),
        slowClient(h.url, `POST /ckp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 9999\r\n\r\n`, '{'),
      ]);
      assert.match(headers, /^HTTP\/1\.1 408/);
      assert.match(body, /^HTTP\/1\.1 408/);
      assert.is((await rpc(h.url, { jsonrpc: '2.0', id: 2, method: 'claw.status' }, auth)).json.result.state, 'READY');
      assert.not.ok(h.c.stderr().includes(TOKEN));
    } finally {
      await h.stop();
    }
  });
}

test.run();
