// Request bodies from the attacker's side, over real sockets (docs/transports.md, HTTP "Limits"): a token holder
// dripping a body gives up its connection once it falls below the body-rate floor, not at request_timeout_ms; a
// body that keeps the floor is read whole; an unauthenticated client answered 401 cannot keep the listener reading
// a body it declared endless.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as http from 'node:http';
import * as net from 'node:net';
import { createHttpServer } from '../../src/transports/http/server.ts';
import { parseHttpUrl, resolveHttpSettings } from '../../src/transports/http/settings.ts';
import { createRateLimiter } from '../../src/transports/http/limits.ts';
import { createAuthenticator } from '../../src/transports/http/auth.ts';
import { MIN_BODY_BYTES_PER_S } from '../../src/transports/http/body.ts';
import { a2aRpcRoute } from '../../src/a2a/rpc-route.ts';
import { captureLogger } from './helpers/fakes.ts';

const TIMEOUT_MS = 3000;

async function serve(maxConnections = 128) {
  const settings = resolveHttpSettings(parseHttpUrl('http://127.0.0.1:0/ckp'), { limits: { request_timeout_ms: TIMEOUT_MS, headers_timeout_ms: 1000, max_body_bytes: 150_000, max_connections: maxConnections } });
  const auth = createAuthenticator([{ ref: 'PARTNER', value: 'partner-secret', caller: true }, { ref: 'OPS', value: 'ops-secret' }], false);
  const server = createHttpServer({ settings, auth, limiter: createRateLimiter(0, () => 0), log: captureLogger(), http, servesA2a: true });
  server.addRoute('/ckp', { auth: 'required', handle: (req, res) => (req.resume(), res.end('{}')) });
  // No session behind the route: what matters is whether and when it answers, having read the body.
  server.addRoute('/a2a', a2aRpcRoute({ tasks: () => undefined, maxBodyBytes: 150_000, requestTimeoutMs: TIMEOUT_MS }));
  await server.listen();
  return { port: server.address().port, close: () => server.close(0) };
}

const head = (token: string | undefined, length: number) =>
  `POST /a2a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}Content-Length: ${length}\r\n\r\n`;

/** Writes `head`, then `bytesPerTick` bytes every `tickMs` until the server answers or closes; the status and when. */
function trickle(port: number, text: string, bytesPerTick: number, tickMs: number) {
  return new Promise<{ status: string; ms: number }>((resolve) => {
    const t0 = performance.now();
    const s = net.connect(port, '127.0.0.1');
    let reply = '';
    let tick: ReturnType<typeof setInterval> | undefined;
    const done = () => {
      clearInterval(tick);
      s.destroy();
      resolve({ status: reply.split('\r\n')[0], ms: performance.now() - t0 });
    };
    s.on('error', () => {});
    s.on('data', (d) => {
      reply += d.toString();
      if (reply.includes('\r\n\r\n')) done();
    });
    s.on('close', done);
    s.on('connect', () => {
      s.write(text);
      tick = setInterval(() => s.writable && s.write('x'.repeat(bytesPerTick)), tickMs);
    });
  });
}

test('a token holder dripping a body is cut (408) after a third of request_timeout_ms, not at it; a body at the floor is read', async () => {
  const s = await serve();
  try {
    const drip = await trickle(s.port, head('partner-secret', 100_000), 1, 100);
    assert.is(drip.status, 'HTTP/1.1 408 Request Timeout');
    // Before: 408 at request_timeout_ms (3 s). Now: at a third of it plus what ~10 bytes are worth at the floor.
    assert.ok(drip.ms > TIMEOUT_MS / 3 - 50 && drip.ms < TIMEOUT_MS / 3 + 600, `cut after ${Math.round(drip.ms)} ms`);
    // Twice the floor, from the first moment, for 2.5 s of a 3 s timeout: every byte read, then parsed (not JSON: 400).
    const rate = 2 * MIN_BODY_BYTES_PER_S;
    const steady = await trickle(s.port, head('partner-secret', Math.round(rate * 2.5)), rate / 10, 100);
    assert.is(steady.status, 'HTTP/1.1 400 Bad Request');
    assert.ok(steady.ms > 2000, `answered after ${Math.round(steady.ms)} ms`);
  } finally {
    await s.close();
  }
});

test('one A2A caller dripping bodies at the floor on every connection holds a quarter of them (429 past it); the operator gets in', async () => {
  const s = await serve(8);
  const socks: net.Socket[] = [];
  const answers: string[] = [];
  try {
    // 8 connections (the cap), each dripping a body at twice the floor: none is cut for its rate.
    for (let i = 0; i < 8; i++) {
      const sock = net.connect(s.port, '127.0.0.1');
      sock.on('error', () => {});
      sock.on('data', (d) => answers.push(d.toString().split('\r\n')[0]));
      await new Promise((r) => sock.once('connect', r));
      sock.write(head('partner-secret', 100_000));
      socks.push(sock);
    }
    const drip = setInterval(() => socks.forEach((x) => x.writable && x.write('x'.repeat(MIN_BODY_BYTES_PER_S / 5))), 100);
    try {
      await new Promise((r) => setTimeout(r, 300));
      // Before: every connection held a request in progress, so the operator's was refused at the cap (503).
      const r = await fetch(`http://127.0.0.1:${s.port}/ckp`, { method: 'POST', headers: { authorization: 'Bearer ops-secret' }, body: '{}' });
      assert.is(r.status, 200);
      assert.is(answers.filter((a) => a === 'HTTP/1.1 429 Too Many Requests').length, 6, `partner answers: ${answers.join(', ')}`);
    } finally {
      clearInterval(drip);
    }
  } finally {
    for (const x of socks) x.destroy();
    await s.close();
  }
});

test('a 401 with an endless declared body: the listener stops reading at once instead of for request_timeout_ms', async () => {
  const s = await serve();
  try {
    const r = await new Promise<{ status: string; sent: number; ms: number }>((resolve) => {
      const t0 = performance.now();
      const sock = net.connect(s.port, '127.0.0.1');
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      let reply = '';
      sock.on('error', () => {});
      sock.on('data', (d) => (reply += d.toString()));
      // At most 64 MiB: the old listener took all of it (and would have gone on for the whole timeout).
      const pump = () => {
        while (!sock.destroyed && sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!sock.write(chunk)) return void sock.once('drain', pump);
        }
        sock.end();
      };
      sock.on('connect', () => (sock.write(head(undefined, 100_000_000_000)), pump()));
      sock.on('close', () => resolve({ status: reply.split('\r\n')[0], sent, ms: performance.now() - t0 }));
    });
    assert.is(r.status, 'HTTP/1.1 401 Unauthorized');
    assert.ok(r.sent < 16 * 1024 * 1024, `the listener took ${r.sent} bytes of a refused body`);
    assert.ok(r.ms < TIMEOUT_MS, `closed after ${Math.round(r.ms)} ms`);
  } finally {
    await s.close();
  }
});

test.run();
