// The HTTP transport's security claims, tried against the built dist/claw.mjs: refusing to bind off loopback
// without authentication, bearer tokens (missing, wrong, right; never in a log line), TLS with a certificate made
// here by openssl, client certificates, body size, slow clients, and 1,000 concurrent requests each answered once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as http from 'node:http';
import * as net from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initParams, runClaw } from './helpers/claw-process.ts';
import { sleep } from './helpers/e2e-util.ts';
import { openStream, request, rpc, startHttpClaw } from './helpers/http-claw.ts';
import { makeCerts } from './helpers/test-certs.ts';

const TOKEN = 'claw-test-token-7f3a9c1e5b';
const status = (id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'claw.status' });
const initialize = { jsonrpc: '2.0', id: 'init', method: 'claw.initialize', params: initParams() };

test('http: a non-loopback address without authentication is refused before anything binds (exit 2)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-http-bind-'));
  try {
    const r = await runClaw(['run', '--listen', 'http://0.0.0.0:0/ckp'], { cwd: dir });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /refusing to listen on a non-loopback address without authentication/);
    assert.is(r.stdout, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('http: bearer token: missing 401, wrong 401, right 200; the SSE stream and a remote /healthz need it too; the token is in no log line', async () => {
  const h = await startHttpClaw(
    `log: { level: debug }
transports:
  - listen: http://127.0.0.1:0/ckp
    http: { auth: { bearer_token_refs: [CLAW_HTTP_TOKEN] } }
`,
    { env: { CLAW_HTTP_TOKEN: TOKEN } },
  );
  try {
    const missing = await rpc(h.url, status());
    assert.is(missing.status, 401);
    assert.is(missing.json.error.code, -32050);
    assert.is(missing.headers['www-authenticate'], 'Bearer realm="claw"');
    const wrong = await rpc(h.url, status(), { headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}X` } });
    assert.is(wrong.status, 401);
    const prefix = await rpc(h.url, status(), { headers: { authorization: `Bearer ${TOKEN}extra` } });
    assert.is(prefix.status, 401);
    const right = await rpc(h.url, initialize, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.is(right.status, 200);
    assert.is(right.json.result.protocolVersion, '0.3.0');
    const s = openStream(h.url);
    assert.is(await s.ready, 401, 'the event stream needs the token');
    s.close();
    // /healthz is open to loopback peers (this test): the state and nothing else.
    const health = await request(h.url.replace(/\/ckp$/, '/healthz'), { method: 'GET' });
    assert.is(health.status, 200);
    assert.equal(Object.keys(health.json).sort(), ['state', 'uptime_ms']);
    // claw send: the token by secret_ref from its environment; without it, the 401's JSON-RPC error (exit 1).
    const send = await runClaw(['send', `${h.url}?token_ref=CLAW_HTTP_TOKEN`, 'claw.status'], { env: { CLAW_HTTP_TOKEN: TOKEN } });
    assert.is(send.code, 0, send.stderr);
    assert.is(JSON.parse(send.stdout).result.state, 'READY');
    const anonymous = await runClaw(['send', h.url, 'claw.status']);
    assert.is(anonymous.code, 1);
    assert.is(JSON.parse(anonymous.stdout).error.code, -32050);
    const unresolved = await runClaw(['send', `${h.url}?token_ref=NOPE`, 'claw.status']);
    assert.is(unresolved.code, 4);
    assert.match(unresolved.stderr, /secret_ref "NOPE" could not be resolved/);
    for (const r of [missing, wrong, prefix]) assert.not.ok(r.text.includes(TOKEN));
    assert.not.ok(h.c.stderr().includes(TOKEN), 'the token never reaches the log');
    assert.match(h.c.stderr(), /http request refused: authentication/);
  } finally {
    await h.stop();
  }
});

test('https: TLS with a test certificate; client certificates required: none 401, untrusted 401, trusted 200; claw send https', async () => {
  const certs = mkdtempSync(join(tmpdir(), 'claw-http-certs-'));
  try {
    makeCerts(certs, ['client'], { rogue: true });
    const h = await startHttpClaw(
      `transports:
  - listen: https://127.0.0.1:0/ckp
    http:
      tls: { cert_file: ${certs}/server.crt, key_file: ${certs}/server.key, client_ca_file: ${certs}/ca.crt }
`,
    );
    try {
      assert.match(h.url, /^https:\/\/127\.0\.0\.1:\d+\/ckp$/);
      const ca = readFileSync(join(certs, 'ca.crt'));
      // Plain http to the TLS port gets nothing usable.
      const plain = await rpc(h.url.replace('https:', 'http:'), status(), { timeoutMs: 2000 }).catch((e: Error) => e);
      assert.ok(plain instanceof Error, 'plain http to the TLS port gets no reply');
      // The server's certificate is checked by the client (no CA: refused).
      const untrusted = await rpc(h.url, status()).catch((e: Error) => e);
      assert.ok(untrusted instanceof Error && /self.signed|unable to verify|certificate/i.test(untrusted.message), String(untrusted));
      const none = await rpc(h.url, status(), { tls: { ca } });
      assert.is(none.status, 401);
      assert.is(none.json.error.code, -32050);
      const rogue = await rpc(h.url, status(), { tls: { ca, cert: readFileSync(join(certs, 'rogue.crt')), key: readFileSync(join(certs, 'rogue.key')) } });
      assert.is(rogue.status, 401);
      const ok = await rpc(h.url, initialize, { tls: { ca, cert: readFileSync(join(certs, 'client.crt')), key: readFileSync(join(certs, 'client.key')) } });
      assert.is(ok.status, 200);
      assert.is(ok.json.result.protocolVersion, '0.3.0');
      const send = await runClaw(['send', `${h.url}?ca=${certs}/ca.crt&cert=${certs}/client.crt&key=${certs}/client.key`, 'claw.status']);
      assert.is(send.code, 0, send.stderr);
      assert.is(JSON.parse(send.stdout).result.state, 'READY');
    } finally {
      await h.stop();
    }
  } finally {
    rmSync(certs, { recursive: true, force: true });
  }
});

test('https: without tls files the listener refuses to start (exit 2)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-http-tls-'));
  try {
    const r = await runClaw(['run', '--listen', 'https://127.0.0.1:0/ckp'], { cwd: dir });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stderr, /https needs tls.cert_file and tls.key_file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('http: a 5 MB body against the default 4 MiB cap → 413; the agent keeps serving', async () => {
  const h = await startHttpClaw('transports:\n  - listen: http://127.0.0.1:0/ckp\n');
  try {
    const big = await rpc(h.url, { jsonrpc: '2.0', id: 1, method: 'claw.status', params: { pad: 'x'.repeat(5 * 1024 * 1024) } });
    assert.is(big.status, 413);
    assert.equal(big.json.error.data, { limit: 4 * 1024 * 1024 });
    // A body far past the cap is cut off rather than read.
    const huge = await rpc(h.url, 'x'.repeat(64 * 1024 * 1024)).catch((e) => e);
    assert.ok(huge instanceof Error || huge.status === 413, String(huge));
    assert.is((await rpc(h.url, status(2))).status, 200);
  } finally {
    await h.stop();
  }
});

test('http: slow clients are cut off (headers and body) while others are served', async () => {
  const h = await startHttpClaw(`transports:
  - listen: http://127.0.0.1:0/ckp
    http: { limits: { headers_timeout_ms: 500, request_timeout_ms: 1000 } }
`);
  try {
    const u = new URL(h.url);
    const slow = (head: string, drip: string) => {
      const s = net.connect(Number(u.port), u.hostname);
      let got = '';
      s.on('data', (c) => (got += c));
      s.on('error', () => {});
      s.write(head);
      const t = setInterval(() => s.write(drip), 150);
      const closed = new Promise<number>((r) => s.on('close', () => r(Date.now())));
      return { closed, got: () => got, stop: () => (clearInterval(t), s.destroy()) };
    };
    const started = Date.now();
    const headers = slow('POST /ckp HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Slow: 1\r\n');
    const body = slow('POST /ckp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n', '{');
    // Meanwhile an ordinary client is answered.
    assert.is((await rpc(h.url, status())).status, 200);
    const ends = await Promise.race([Promise.all([headers.closed, body.closed]), sleep(5000).then(() => undefined)]);
    headers.stop();
    body.stop();
    assert.ok(ends, 'both slow connections were closed');
    for (const t of ends!) assert.ok(t - started < 4000, `closed after ${t - started} ms`);
    assert.match(headers.got(), /^HTTP\/1\.1 408/);
    assert.match(body.got(), /^HTTP\/1\.1 408/);
    assert.is((await rpc(h.url, status(3))).status, 200);
  } finally {
    await h.stop();
  }
});

test('http: 1,000 concurrent requests: every one answered once, with its own id', async () => {
  const h = await startHttpClaw(`transports:
  - listen: http://127.0.0.1:0/ckp
    http: { limits: { max_connections: 256, requests_per_minute: 0 } }
`);
  try {
    await rpc(h.url, initialize);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 200 });
    const ids = Array.from({ length: 1000 }, (_, i) => `r-${i}`);
    const replies = await Promise.all(ids.map((id, i) => rpc(h.url, i % 10 === 0 ? { jsonrpc: '2.0', id, method: 'claw.nope' } : status(id), { agent })));
    agent.destroy();
    assert.ok(replies.every((r) => r.status === 200));
    const got = replies.map((r) => r.json.id);
    assert.equal(got, ids, 'each request got the reply with its own id');
    assert.is(new Set(got).size, 1000, 'no reply twice');
    replies.forEach((r, i) => (i % 10 === 0 ? assert.is(r.json.error.code, -32601) : assert.is(r.json.result.state, 'READY')));
  } finally {
    await h.stop();
  }
});

test.run();
