// The HTTP transport runs the transport contract (over plain http on loopback, through its own client), then its
// own promises: sessions, the SSE buffer and resume, authentication, limits, /healthz and the bind rules.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as http from 'node:http';
import { createHttpListener } from '../../src/transports/http/listen-http.ts';
import { connectHttpClient } from '../../src/transports/http/client-http.ts';
import { parseHttpUrl, resolveHttpSettings } from '../../src/transports/http/settings.ts';
import { EventBuffer } from '../../src/transports/http/sse.ts';
import { createRateLimiter } from '../../src/transports/http/limits.ts';
import type { HttpTransport } from '../../src/transports/http/transport.ts';
import type { InboundFrame } from '../../src/kernel/ports.ts';
import { SecretResolver } from '../../src/kernel/secrets.ts';
import { Redactor } from '../../src/log/redactor.ts';
import { captureLogger, tick, until } from './helpers/fakes.ts';
import { echo, transportContract, type ContractPeer } from './transport-contract.ts';

const systemClock = { now: () => Date.now(), monotonic: () => performance.now(), setInterval: () => ({ cancel() {} }), setTimeout: () => ({ cancel() {} }) };

async function listen(http: Record<string, unknown> = {}, opts: { env?: Record<string, string>; maxFrameBytes?: number; uri?: string } = {}) {
  const log = captureLogger();
  const redactor = new Redactor();
  const secrets = new SecretResolver({ env: opts.env ?? {} }, redactor);
  const t = await createHttpListener({ listen: opts.uri ?? 'http://127.0.0.1:0/ckp', http } as never, {
    log,
    clock: systemClock,
    baseDir: '/',
    dataDir: '/nonexistent',
    maxFrameBytes: opts.maxFrameBytes,
    secrets,
  });
  return { t, log, redactor };
}

transportContract(
  'http',
  async () => {
    const { t } = await listen({}, { maxFrameBytes: 1024 });
    const clients: { close(): Promise<void> }[] = [];
    return {
      transport: t,
      maxFrameBytes: 1024,
      async peer(): Promise<ContractPeer> {
        const c = await connectHttpClient(t.url, { baseDir: '/' });
        clients.push(c);
        const notifications: any[] = [];
        c.onNotification!((m) => notifications.push(m));
        // The stream is open once the listener counts it; give the GET a moment.
        await tick(50);
        return { send: (text, o) => c.sendRaw!(text, o), notifications, close: () => c.close() };
      },
      async cleanup() {
        for (const c of clients) await c.close();
      },
    };
  },
  { multiSender: true },
);

/** A raw request: status, headers and body text. */
function raw(url: string, o: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: o.path ?? u.pathname, method: o.method ?? 'POST', headers: { 'content-type': 'application/json', ...o.headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

async function withListener(http: Record<string, unknown>, fn: (t: HttpTransport, extra: { log: ReturnType<typeof captureLogger>; frames: InboundFrame[] }) => Promise<void>, opts: Parameters<typeof listen>[1] = {}) {
  const { t, log } = await listen(http, opts);
  const frames: InboundFrame[] = [];
  t.start((f) => {
    frames.push(f);
    echo(f);
  });
  try {
    await fn(t, { log, frames });
  } finally {
    await t.close();
  }
}

const status = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'claw.status' });

test('http: bearer tokens: missing 401, wrong 401, right 200; no token in any log line or reply', async () => {
  const token = 'tok-0123456789abcdef';
  await withListener({ auth: { bearer_token_refs: ['HTTP_TOKEN'] } }, async (t, { log }) => {
    const missing = await raw(t.url, { body: status });
    assert.is(missing.status, 401);
    assert.is(missing.headers['www-authenticate'], 'Bearer realm="claw"');
    assert.equal(JSON.parse(missing.body).error.code, -32050);
    const wrong = await raw(t.url, { body: status, headers: { authorization: `Bearer ${token}x` } });
    assert.is(wrong.status, 401);
    assert.is(JSON.parse(wrong.body).error.message, 'authentication failed');
    const notBearer = await raw(t.url, { body: status, headers: { authorization: `Basic ${token}` } });
    assert.is(notBearer.status, 401);
    const right = await raw(t.url, { body: status, headers: { authorization: `Bearer ${token}` } });
    assert.is(right.status, 200);
    assert.is(JSON.parse(right.body).result.method, 'claw.status');
    for (const r of [missing, wrong, notBearer]) assert.not.ok(r.body.includes(token));
    assert.not.ok(log.text().includes(token), 'no token in the log');
  }, { env: { HTTP_TOKEN: token } });
});

test('http: an unresolvable token ref refuses to start', async () => {
  try {
    await listen({ auth: { bearer_token_refs: ['NOPE'] } });
    assert.unreachable();
  } catch (e) {
    assert.is((e as { code?: string }).code, 'secret-unresolved');
  }
});

test('http: a non-loopback bind needs authentication, and tokens over plain http need allow_plaintext', () => {
  const ep = parseHttpUrl('http://0.0.0.0:8080');
  assert.throws(() => resolveHttpSettings(ep, {}), /without authentication/);
  assert.throws(() => resolveHttpSettings(ep, { auth: { bearer_token_refs: ['T'] } }), /clear text/);
  assert.is(resolveHttpSettings(ep, { auth: { bearer_token_refs: ['T'], allow_plaintext: true } }).bindHost, '0.0.0.0');
  assert.throws(() => resolveHttpSettings(parseHttpUrl('https://[::]:8443'), { auth: { bearer_token_refs: ['T'] } }), /tls.cert_file/);
  assert.throws(() => resolveHttpSettings(parseHttpUrl('http://192.168.1.2:1'), {}), /non-loopback/);
  assert.throws(() => resolveHttpSettings(parseHttpUrl('http://agent.lan:1'), {}), /non-loopback/);
  assert.throws(() => parseHttpUrl('http://user:pw@127.0.0.1:1'), /credentials/);
  assert.throws(() => resolveHttpSettings(parseHttpUrl('http://127.0.0.1:1/?x=1'), {}), /unknown http listen URL parameter/);
  assert.is(resolveHttpSettings(parseHttpUrl('http://localhost:1'), {}).bindHost, '127.0.0.1');
  assert.is(resolveHttpSettings(parseHttpUrl('http://[::1]:1'), {}).bindHost, '::1');
  assert.is(parseHttpUrl('http://127.0.0.1:9/').path, '/ckp');
  assert.is(parseHttpUrl('http://127.0.0.1:9/agents/a/').path, '/agents/a');
});

test('http: notifications only → 202 without a body; a batch gets one reply', async () => {
  await withListener({}, async (t) => {
    const n = await raw(t.url, { body: JSON.stringify([{ jsonrpc: '2.0', method: 'a' }, { jsonrpc: '2.0', method: 'b' }]) });
    assert.is(n.status, 202);
    assert.is(n.body, '');
    const b = await raw(t.url, { body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'a' }, { jsonrpc: '2.0', method: 'n' }]) });
    assert.is(b.status, 200);
    assert.is(JSON.parse(b.body).length, 1);
  });
});

test('http: a POST body is parsed once (by the router), not again by the route', async () => {
  // Before, the route parsed each body to learn whether to answer 202, then the router parsed it again: a 4 MB
  // body of small objects cost ~37 ms of CPU more (dist/claw.mjs, measured).
  await withListener({}, async (t) => {
    const note = JSON.stringify({ jsonrpc: '2.0', method: 'claw.note', params: { pad: 'p'.repeat(1000) } });
    const req = JSON.stringify([{ jsonrpc: '2.0', id: 7, method: 'claw.status', params: { pad: 'q'.repeat(1000) } }]);
    const parse = JSON.parse;
    let parses = 0;
    JSON.parse = ((text: string, reviver?: any) => {
      if (text === note || text === req) parses++;
      return parse(text, reviver);
    }) as typeof JSON.parse;
    try {
      assert.is((await raw(t.url, { body: note })).status, 202);
      assert.is((await raw(t.url, { body: req })).status, 200);
    } finally {
      JSON.parse = parse;
    }
    assert.is(parses, 2, 'one parse per body');
  });
});

test('http: refusals are statuses with JSON-RPC bodies: 415, 405, 404, 400 (parse, encoding), 413', async () => {
  await withListener({}, async (t) => {
    const form = await raw(t.url, { body: status, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.is(form.status, 415);
    assert.is(JSON.parse(form.body).error.code, -32600);
    const put = await raw(t.url, { method: 'PUT', body: status });
    assert.is(put.status, 405);
    assert.is(put.headers.allow, 'GET, POST');
    const nowhere = await raw(t.url, { path: '/other', body: status });
    assert.is(nowhere.status, 404);
    const parse = await raw(t.url, { body: '{nope' });
    assert.is(parse.status, 400);
    assert.is(JSON.parse(parse.body).error.code, -32700);
    const latin1 = await raw(t.url, { body: Buffer.from([0x7b, 0xe9, 0x7d]) });
    assert.is(latin1.status, 400);
    assert.is(JSON.parse(latin1.body).error.code, -32600, 'the contract echo answers encoding errors -32600');
    const big = await raw(t.url, { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'm', params: { p: 'x'.repeat(2000) } }) });
    assert.is(big.status, 413);
    assert.equal(JSON.parse(big.body).error.data, { limit: 1024 });
  }, { maxFrameBytes: 1024 });
});

test('http: an oversize chunked body (no Content-Length) is refused 413 and the listener goes on', async () => {
  await withListener({}, async (t, { frames }) => {
    const u = new URL(t.url);
    const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, agent: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      for (let i = 0; i < 4; i++) req.write('x'.repeat(600));
      req.end();
    });
    assert.is(r.status, 413);
    const p = frames[0].payload as { error: string; bytes: number };
    assert.is(p.error, 'oversize');
    assert.ok(p.bytes > 1024);
    assert.is((await raw(t.url, { body: status })).status, 200);
  }, { maxFrameBytes: 1024 });
});

test('http: requests per minute per client: 429 with Retry-After and -32051', async () => {
  await withListener({ limits: { requests_per_minute: 3 } }, async (t) => {
    for (let i = 0; i < 3; i++) assert.is((await raw(t.url, { body: status })).status, 200);
    const r = await raw(t.url, { body: status });
    assert.is(r.status, 429);
    assert.ok(Number(r.headers['retry-after']) >= 1);
    assert.is(JSON.parse(r.body).error.code, -32051);
  });
});

test('http: the request rate window follows the monotonic clock: a wall-clock step neither resets nor stalls it', async () => {
  // A board without an RTC boots at 1970 and NTP steps the clock to today. Before: each step started a fresh
  // window, so the 4th request in the same minute was allowed right after the step.
  let wall = 0;
  let mono = 1_000;
  const clock = { ...systemClock, now: () => wall, monotonic: () => mono };
  const t = await createHttpListener({ listen: 'http://127.0.0.1:0/ckp', http: { limits: { requests_per_minute: 3 } } } as never, {
    log: captureLogger(),
    clock,
    baseDir: '/',
    dataDir: '/nonexistent',
    secrets: new SecretResolver({ env: {} }, new Redactor()),
  });
  t.start(echo);
  try {
    for (let i = 0; i < 3; i++) assert.is((await raw(t.url, { body: status })).status, 200);
    assert.is((await raw(t.url, { body: status })).status, 429);
    wall = Date.UTC(2026, 11, 7); // NTP steps the clock forward
    mono += 10;
    const r = await raw(t.url, { body: status });
    assert.is(r.status, 429, 'a forward step does not open a new window');
    assert.ok(Number(r.headers['retry-after']) <= 60, `retry-after ${r.headers['retry-after']}`);
    wall = 0; // and back
    assert.is((await raw(t.url, { body: status })).status, 429, 'a backward step does not either');
    mono += 120_000; // two minutes later, whatever the wall clock says
    assert.is((await raw(t.url, { body: status })).status, 200);
  } finally {
    await t.close();
  }
});

test('http: rate limiter windows slide and the client table stays bounded', () => {
  let now = 0;
  const rl = createRateLimiter(2, () => now, 3);
  assert.is(rl.take('a'), 0);
  assert.is(rl.take('a'), 0);
  assert.ok(rl.take('a') > 0);
  now = 60_000 * 2; // two windows later: nothing of the old one counts
  assert.is(rl.take('a'), 0);
  for (const k of ['b', 'c', 'd', 'e']) assert.is(rl.take(k), 0);
});

/** `n` connections each with a request in progress (headers sent, the body not yet), settled for 50 ms. */
async function requestsInProgress(url: string, n: number) {
  const u = new URL(url);
  const net = await import('node:net');
  const held = Array.from({ length: n }, () => net.connect(Number(u.port), u.hostname));
  await Promise.all(held.map((s) => new Promise((r) => s.once('connect', r))));
  for (const s of held) s.write('POST /ckp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
  await tick(50);
  return held;
}

test('http: concurrent connections over the cap get 503 while every connection has a request in progress', async () => {
  await withListener({ limits: { max_connections: 2 } }, async (t) => {
    const held = await requestsInProgress(t.url, 2);
    const r = await raw(t.url, { body: status });
    assert.is(r.status, 503);
    assert.is(JSON.parse(r.body).error.message, 'too many connections');
    for (const s of held) s.destroy();
    await tick(50);
    assert.is((await raw(t.url, { body: status })).status, 200);
  });
});

test('http: at the cap, a connection with no request in progress (headers trickling, idle keep-alive) gives way to a new one, oldest first', async () => {
  // Before: two connections trickling their headers, reopened when cut, kept every other client at 503 for good.
  await withListener({ limits: { max_connections: 2, headers_timeout_ms: 5000 } }, async (t) => {
    const u = new URL(t.url);
    const net = await import('node:net');
    const slow = [net.connect(Number(u.port), u.hostname), net.connect(Number(u.port), u.hostname)];
    const closed = [false, false];
    slow.forEach((s, i) => s.on('close', () => (closed[i] = true)));
    for (const s of slow) {
      s.on('error', () => {});
      s.write('POST /ckp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    }
    const drip = setInterval(() => slow.forEach((s) => s.write('X-A: b\r\n')), 100);
    await tick(100);
    try {
      const r = await raw(t.url, { body: status });
      assert.is(r.status, 200, r.body);
      await until(() => closed[0], 1000);
      assert.not.ok(closed[1], 'only one gave way');
    } finally {
      clearInterval(drip);
      for (const s of slow) s.destroy();
    }
  });
});

test('https: at the cap, a TLS handshake that never ends gives way; a TLS connection with a request in progress does not', async () => {
  // The request arrives on the TLS socket, the cap counts the TCP one under it: the two are matched by their
  // public addresses. Before: the new client was closed at the cap whatever the others were doing.
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { execFileSync } = await import('node:child_process');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'claw-http-tls-'));
  const net = await import('node:net');
  const tls = await import('node:tls');
  const https = await import('node:https');
  const open: import('node:net').Socket[] = [];
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '1', '-subj', '/CN=127.0.0.1'], { cwd: dir, stdio: 'pipe' });
    const log = captureLogger();
    const t = await createHttpListener({ listen: 'https://127.0.0.1:0/ckp', http: { tls: { cert_file: 'c.pem', key_file: 'k.pem' }, limits: { max_connections: 2, headers_timeout_ms: 5000 } } } as never, {
      log,
      clock: systemClock,
      baseDir: dir,
      dataDir: '/nonexistent',
      secrets: new SecretResolver({ env: {} }, new Redactor()),
    });
    t.start(echo);
    try {
      const u = new URL(t.url);
      // Oldest: a TLS connection whose request is in progress (headers sent, body not yet).
      const busy = tls.connect({ host: u.hostname, port: Number(u.port), rejectUnauthorized: false });
      open.push(busy);
      await new Promise((r) => busy.once('secureConnect', r));
      busy.write('POST /ckp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
      // Then: a TCP connection that never starts its handshake.
      const mute = net.connect(Number(u.port), u.hostname);
      open.push(mute);
      await new Promise((r) => mute.once('connect', r));
      const closed = { busy: false, mute: false };
      busy.on('close', () => (closed.busy = true));
      mute.on('close', () => (closed.mute = true));
      for (const s of open) s.on('error', () => {});
      await tick(100);
      const got = await new Promise<number | string>((resolve) => {
        const req = https.request({ host: u.hostname, port: u.port, path: '/ckp', method: 'POST', headers: { 'content-type': 'application/json' }, rejectUnauthorized: false, agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', (e) => resolve(e.message));
        req.end(status);
      });
      assert.is(got, 200);
      await until(() => closed.mute, 1000);
      assert.not.ok(closed.busy, 'the connection with a request in progress stays');
    } finally {
      await t.close();
    }
  } finally {
    for (const s of open) s.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('http: at the cap, an idle keep-alive connection gives way; the new client gets its answer', async () => {
  await withListener({ limits: { max_connections: 1 } }, async (t) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const u = new URL(t.url);
    try {
      const first = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const req = http.request({ host: u.hostname, port: u.port, path: '/ckp', method: 'POST', headers: { 'content-type': 'application/json' }, agent }, resolve);
        req.on('error', reject);
        req.end(status);
      });
      first.resume();
      await new Promise((r) => first.on('end', r));
      await tick(50);
      // The keep-alive connection is idle and holds the only slot.
      assert.is((await raw(t.url, { body: status })).status, 200);
    } finally {
      agent.destroy();
    }
  });
});

test('http: a request on a connection refused with 503 is not run (its client retries it: it would run twice)', async () => {
  await withListener({ limits: { max_connections: 2 } }, async (t, { frames }) => {
    const u = new URL(t.url);
    const net = await import('node:net');
    const held = await requestsInProgress(t.url, 2);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'once', method: 'claw.status' });
    const s = net.connect(Number(u.port), u.hostname);
    let got = '';
    s.on('data', (c) => (got += c));
    s.on('error', () => {});
    s.write(`POST /ckp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await tick(300);
    s.destroy();
    for (const x of held) x.destroy();
    assert.match(got, /^HTTP\/1\.1 503/);
    assert.is(frames.length, 0, 'the refused request reached the router');
  });
});

test('http: a client sending its headers too slowly is cut off (408)', async () => {
  await withListener({ limits: { headers_timeout_ms: 300, request_timeout_ms: 600 } }, async (t) => {
    const u = new URL(t.url);
    const net = await import('node:net');
    const s = net.connect(Number(u.port), u.hostname);
    let got = '';
    s.on('data', (c) => (got += c));
    const ended = new Promise((r) => s.on('close', r));
    s.write('POST /ckp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const drip = setInterval(() => s.write('X-A: b\r\n'), 100);
    const started = Date.now();
    await Promise.race([ended, tick(4000)]);
    clearInterval(drip);
    s.destroy();
    assert.ok(Date.now() - started < 3500, 'the connection was closed');
    assert.match(got, /^HTTP\/1\.1 408/);
  });
});

test('http: session id: issued on a successful claw.initialize, checked when sent, retired by claw.shutdown', async () => {
  const { t } = await listen();
  t.start((f) => {
    const m = JSON.parse((f.payload as { text: string }).text);
    f.parsed?.(m);
    f.reply({ jsonrpc: '2.0', id: m.id, result: m.method === 'claw.initialize' ? { protocolVersion: '0.3.0' } : {} });
  });
  try {
    const init = await raw(t.url, { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: {} }) });
    const sid = init.headers['claw-session-id'] as string;
    assert.match(sid, /^[0-9a-f]{32}$/);
    assert.is((await raw(t.url, { body: status, headers: { 'claw-session-id': sid } })).status, 200);
    assert.is((await raw(t.url, { body: status })).status, 200, 'no header: accepted (operators attach)');
    const stale = await raw(t.url, { body: status, headers: { 'claw-session-id': 'f'.repeat(32) } });
    assert.is(stale.status, 404);
    assert.is(JSON.parse(stale.body).error.code, -32600);
    await raw(t.url, { body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'claw.shutdown' }), headers: { 'claw-session-id': sid } });
    assert.is((await raw(t.url, { body: status, headers: { 'claw-session-id': sid } })).status, 404);
  } finally {
    await t.close();
  }
});

test('http: a refused claw.initialize issues no session id', async () => {
  const { t } = await listen();
  t.start((f) => f.reply({ jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'not now', data: { state: 'READY' } } }));
  try {
    const r = await raw(t.url, { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'claw.initialize', params: {} }) });
    assert.is(r.headers['claw-session-id'], undefined);
  } finally {
    await t.close();
  }
});

test('http: SSE: events carry consecutive ids; Last-Event-ID replays what was missed; a foreign epoch replays the buffer', () => {
  const b = new EventBuffer(3, 'ab12');
  for (let i = 1; i <= 5; i++) b.push({ n: i });
  assert.equal(b.since(undefined), []);
  assert.equal(b.since('ab12-3').map((e) => e.seq), [4, 5]);
  assert.equal(b.since('ab12-1').map((e) => e.seq), [3, 4, 5], 'older than the buffer: what it still holds');
  assert.equal(b.since('ffff-4').map((e) => e.seq), [3, 4, 5]);
  assert.equal(b.since('ab12-5'), []);
  assert.is(b.since('ab12-4')[0].wire, 'id: ab12-5\ndata: {"n":5}\n\n');
});

test('http: SSE over the wire: heartbeat delivery, resume with Last-Event-ID, stream cap', async () => {
  await withListener({ limits: { max_streams: 1 } }, async (t) => {
    const u = new URL(t.url);
    const open = (headers: Record<string, string> = {}) =>
      new Promise<{ res: http.IncomingMessage; text: () => string; req: http.ClientRequest }>((resolve, reject) => {
        let text = '';
        const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'GET', headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
          res.setEncoding('utf8');
          res.on('data', (c) => (text += c));
          resolve({ res, text: () => text, req });
        });
        req.on('error', reject);
        req.end();
      });
    const a = await open();
    assert.is(a.res.statusCode, 200);
    assert.is(a.res.headers['content-type'], 'text/event-stream');
    const second = await open();
    assert.is(second.res.statusCode, 503, 'stream cap');
    second.req.destroy();
    t.notify({ jsonrpc: '2.0', method: 'claw.heartbeat', params: { state: 'READY', uptime_ms: 1 } });
    t.notify({ jsonrpc: '2.0', method: 'claw.heartbeat', params: { state: 'READY', uptime_ms: 2 } });
    await until(() => a.text().split('data: ').length === 3);
    const firstId = /id: (\S+)/.exec(a.text())![1];
    a.req.destroy();
    await tick(50);
    t.notify({ jsonrpc: '2.0', method: 'claw.heartbeat', params: { state: 'READY', uptime_ms: 3 } });
    const b = await open({ 'last-event-id': firstId });
    await until(() => b.text().split('data: ').length === 3);
    const data = [...b.text().matchAll(/data: (.*)\n/g)].map((m) => JSON.parse(m[1]).params.uptime_ms);
    assert.equal(data, [2, 3], 'missed events replayed, in order, none twice');
    b.req.destroy();
  });
});

test('http: /healthz answers the lifecycle state through the router, open on loopback', async () => {
  await withListener({ auth: { bearer_token_refs: ['HTTP_TOKEN'] } }, async (t) => {
    const u = new URL(t.url);
    const h = await raw(t.url, { method: 'GET', path: '/healthz' });
    // The contract echo answers claw.status with {method, params}: no state, so the probe says UNKNOWN → 503.
    assert.is(h.status, 503);
    assert.is(JSON.parse(h.body).state, 'UNKNOWN');
    assert.ok(u.hostname === '127.0.0.1');
  }, { env: { HTTP_TOKEN: 'tok-0123456789abcdef' } });
  const { t } = await listen();
  t.start((f) => f.reply({ jsonrpc: '2.0', id: JSON.parse((f.payload as { text: string }).text).id, error: { code: -32600, message: 'x', data: { state: 'INIT' } } }));
  try {
    const h = await raw(t.url, { method: 'GET', path: '/healthz' });
    assert.is(h.status, 200);
    assert.equal(JSON.parse(h.body), { state: 'INIT' });
    assert.is((await raw(t.url, { method: 'GET', path: '/healthz?ready' })).status, 503);
  } finally {
    await t.close();
  }
});

test('http: the route seam serves another path on the same listener, behind the same gates', async () => {
  await withListener({ auth: { bearer_token_refs: ['HTTP_TOKEN'] } }, async (t) => {
    t.addRoute('/.well-known/test', { auth: 'public', handle: (_req, res) => res.end('card') });
    t.addRoute('/private', { auth: 'required', handle: (_req, res) => res.end('secret') });
    assert.is((await raw(t.url, { method: 'GET', path: '/.well-known/test' })).body, 'card');
    assert.is((await raw(t.url, { method: 'GET', path: '/private' })).status, 401);
  }, { env: { HTTP_TOKEN: 'tok-0123456789abcdef' } });
});


test('http: from a non-loopback address /healthz needs the token (loopback-open means loopback only)', async () => {
  const os = await import('node:os');
  const external = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  if (!external) {
    console.log('  (skipped: this machine has no non-loopback IPv4 address)');
    return;
  }
  const token = 'tok-0123456789abcdef';
  const { t } = await listen({ auth: { bearer_token_refs: ['HTTP_TOKEN'], allow_plaintext: true } }, { env: { HTTP_TOKEN: token }, uri: 'http://0.0.0.0:0/ckp' });
  t.start((f) => f.reply({ jsonrpc: '2.0', id: JSON.parse((f.payload as { text: string }).text).id, result: { state: 'READY', uptime_ms: 1 } }));
  try {
    const port = new URL(t.url).port;
    const remote = `http://${external}:${port}/ckp`;
    const open = await raw(remote, { method: 'GET', path: '/healthz' });
    assert.is(open.status, 401);
    assert.not.ok(open.body.includes('READY'));
    const withToken = await raw(remote, { method: 'GET', path: '/healthz', headers: { authorization: `Bearer ${token}` } });
    assert.is(withToken.status, 200);
    assert.is((await raw(`http://127.0.0.1:${port}/ckp`, { method: 'GET', path: '/healthz' })).status, 200, 'loopback: open');
    assert.is((await raw(remote, { body: status })).status, 401);
  } finally {
    await t.close();
  }
});

test('http: authentication refusals are logged once a minute per address', async () => {
  await withListener({ auth: { bearer_token_refs: ['HTTP_TOKEN'] } }, async (t, { log }) => {
    for (let i = 0; i < 5; i++) assert.is((await raw(t.url, { body: status })).status, 401);
    assert.is(log.entries.filter((e) => e.msg === 'http request refused: authentication').length, 1);
  }, { env: { HTTP_TOKEN: 'tok-0123456789abcdef' } });
});

test('http: the runtime configuration takes an http block and rejects unknown keys in it', async () => {
  const v = await import('valibot');
  const { runtimeConfigSchema } = await import('../../src/config/runtime-config.ts');
  const ok = v.safeParse(runtimeConfigSchema, {
    transports: [{ listen: 'https://0.0.0.0:8443/ckp', http: { auth: { bearer_token_refs: ['T'] }, tls: { cert_file: 'a', key_file: 'b', client_ca_file: 'c' }, limits: { max_connections: 4, requests_per_minute: 0 }, sse: { buffer: 8 } } }],
  });
  assert.ok(ok.success, JSON.stringify(ok.issues));
  assert.not.ok(v.safeParse(runtimeConfigSchema, { transports: [{ listen: 'http://127.0.0.1:1', http: { auth: { token: 'inline' } } }] }).success, 'no inline token');
  assert.not.ok(v.safeParse(runtimeConfigSchema, { transports: [{ listen: 'http://127.0.0.1:1', http: { tls: { cert_file: 'a' } } }] }).success, 'key_file required');
});


test('http: a browser on another site cannot drive a loopback agent: foreign Origin 403, rebinding Host 403; allowed origins pass', async () => {
  await withListener({ allowed_origins: ['https://console.example'] }, async (t, { frames }) => {
    const port = new URL(t.url).port;
    const evil = await raw(t.url, { body: status, headers: { origin: 'http://evil.example' } });
    assert.is(evil.status, 403);
    assert.is(JSON.parse(evil.body).error.code, -32050);
    assert.is((await raw(t.url, { body: status, headers: { origin: 'null' } })).status, 403);
    const rebound = await raw(t.url, { body: status, headers: { host: `evil.example:${port}` } });
    assert.is(rebound.status, 403);
    assert.is(frames.length, 0, 'nothing reached the router');
    assert.is((await raw(t.url, { body: status, headers: { origin: `http://localhost:${port}` } })).status, 200);
    assert.is((await raw(t.url, { body: status, headers: { origin: 'https://console.example' } })).status, 200);
    assert.is((await raw(t.url, { body: status, headers: { host: `localhost:${port}` } })).status, 200);
    assert.is((await raw(t.url, { method: 'GET', path: '/healthz', headers: { host: 'evil.example' } })).status, 403);
  });
});


test('http: an event stream outlives the request and idle timeouts (it is a response, kept open on purpose)', async () => {
  await withListener({ limits: { headers_timeout_ms: 100, request_timeout_ms: 200, idle_timeout_ms: 100 }, sse: { keepalive_ms: 5000 } }, async (t) => {
    const u = new URL(t.url);
    let text = '';
    let closed = false;
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'GET', agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('close', () => (closed = true));
    });
    req.on('error', () => {});
    req.end();
    await tick(1200);
    assert.not.ok(closed, 'the stream is still open');
    t.notify({ jsonrpc: '2.0', method: 'claw.heartbeat', params: { state: 'READY', uptime_ms: 9 } });
    await until(() => text.includes('"uptime_ms":9'));
    req.destroy();
  });
});

test('http client: a token_ref resolves through the runtime\'s resolver only, never from process.env behind its back', async () => {
  process.env.CLAW_TEST_CLIENT_TOKEN = 'tok-from-process-env';
  try {
    const err = await connectHttpClient('http://127.0.0.1:9/ckp?token_ref=CLAW_TEST_CLIENT_TOKEN', { baseDir: '/' }).then(
      () => undefined,
      (e) => e,
    );
    assert.is(err?.code, 'secret-unresolved');
    // A resolver without the environment (`secrets.env: false`) does not see the variable either.
    const none = new SecretResolver({}, new Redactor());
    const refused = await connectHttpClient('http://127.0.0.1:9/ckp?token_ref=CLAW_TEST_CLIENT_TOKEN', { baseDir: '/', secrets: none }).then(
      () => undefined,
      (e) => e,
    );
    assert.ok(refused, 'no token from process.env');
  } finally {
    delete process.env.CLAW_TEST_CLIENT_TOKEN;
  }
});

test.run();
