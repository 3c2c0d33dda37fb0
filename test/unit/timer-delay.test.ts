// Durations from outside handed to Node timers (src/protocol/delay.ts): beyond 2^31 − 1 ms a timer would fire after
// 1 ms; clamped, the wait is as long as a timer can hold.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_TIMER_MS, timerDelay } from '../../src/protocol/delay.ts';
import { InflightTracker } from '../../src/kernel/inflight.ts';
import { systemClock } from '../../src/node/clock.ts';
import { createMemoryPair } from '../../src/transports/memory-pair.ts';
import { runSandboxed } from '../../src/sandbox/runner.ts';
import { detectHost } from '../../src/sandbox/host.ts';
import { guardedFetch } from '../../src/net/guarded-fetch.ts';
import { createServer } from 'node:http';
import { webhookSink } from '../../src/audit/sink-webhook.ts';
import { parseHttpUrl, resolveHttpSettings } from '../../src/transports/http/settings.ts';

const HUGE = 3_000_000_000;

/** Runs `body` and returns the names of the process warnings it caused (a TimeoutOverflowWarning is one). */
async function warningsOf(body: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  // Only the overflow warning is this code's: the whole unit suite shares one process, and another file's
  // leftovers (a MaxListenersExceededWarning seen once under load) must not fail this test.
  const onWarning = (w: Error) => {
    if (w.name === 'TimeoutOverflowWarning') warnings.push(w.name);
    else console.error(`  (a ${w.name} during this test, not counted: ${w.message})`);
  };
  process.on('warning', onWarning);
  try {
    await body();
    await new Promise((r) => setImmediate(r));
    return warnings;
  } finally {
    process.off('warning', onWarning);
  }
}

test('timerDelay clamps to [0, 2^31 − 1] and floors', () => {
  assert.is(MAX_TIMER_MS, 2147483647);
  assert.is(timerDelay(3_000_000_000), MAX_TIMER_MS);
  assert.is(timerDelay(1e300), MAX_TIMER_MS);
  assert.is(timerDelay(Infinity), MAX_TIMER_MS);
  assert.is(timerDelay(-5), 0);
  assert.is(timerDelay(NaN), 0);
  assert.is(timerDelay(12.7), 12);
});

test('a drain with a 3e9 ms timeout waits for the work (not 1 ms) and prints no TimeoutOverflowWarning', async () => {
  const warnings: string[] = [];
  // Only the overflow warning is this code's: the whole unit suite shares one process, and another file's
  // leftovers (a MaxListenersExceededWarning seen once under load) must not fail this test.
  const onWarning = (w: Error) => {
    if (w.name === 'TimeoutOverflowWarning') warnings.push(w.name);
    else console.error(`  (a ${w.name} during this test, not counted: ${w.message})`);
  };
  process.on('warning', onWarning);
  try {
    const t = new InflightTracker();
    const token = t.begin();
    t.hold(token);
    setTimeout(() => t.end(token), 50);
    assert.is(await t.drain(3_000_000_000), true);
    await new Promise((r) => setImmediate(r));
    assert.equal(warnings, []);
  } finally {
    process.off('warning', onWarning);
  }
});

test('the system clock clamps: a 3e9 ms timeout or interval has not fired 60 ms later', async () => {
  const warnings = await warningsOf(async () => {
    let fired = 0;
    const t = systemClock.setTimeout(() => fired++, HUGE);
    const i = systemClock.setInterval(() => fired++, HUGE);
    await new Promise((r) => setTimeout(r, 60));
    t.cancel();
    i.cancel();
    assert.is(fired, 0);
  });
  assert.equal(warnings, []);
});

test('a memory-pair request with timeoutMs 3e9 waits for its reply', async () => {
  const warnings = await warningsOf(async () => {
    const pair = createMemoryPair();
    pair.transport.start((f) => {
      const msg = JSON.parse((f.payload as { text: string }).text);
      setTimeout(() => f.reply({ jsonrpc: '2.0', id: msg.id, result: 'late' }), 40);
    });
    const c = pair.client();
    assert.equal(await c.request({ jsonrpc: '2.0', id: 1, method: 'x' }, { timeoutMs: HUGE }), { jsonrpc: '2.0', id: 1, result: 'late' });
    await c.close();
    await pair.transport.close();
  });
  assert.equal(warnings, []);
});

test('a sandboxed run with timeoutMs 3e9 is not timed out at once', async () => {
  const host = await detectHost();
  const warnings = await warningsOf(async () => {
    const r = await runSandboxed({ bin: 'sh', argv: ['-c', 'sleep 0.1; echo done'], env: { PATH: '/usr/bin:/bin' }, sandbox: { level: 'none' }, host, timeoutMs: HUGE });
    assert.is(r.timedOut, false);
    assert.is(r.stdout.trim(), 'done');
  });
  assert.equal(warnings, []);
});

test('a guarded fetch with timeoutMs 3e9 waits for a slow server', async () => {
  const server = createServer((_q, res) => void setTimeout(() => res.end('slow'), 60));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const warnings = await warningsOf(async () => {
      const res = await guardedFetch(`http://127.0.0.1:${port}/`, { timeoutMs: HUGE }, { mode: 'allowlist', allowed_hosts: ['127.0.0.1'] }, { checkAddress: () => null });
      assert.is(res.status, 200);
    });
    assert.equal(warnings, []);
  } finally {
    server.close();
  }
});

test('an audit webhook POST with timeoutMs 3e9 is not aborted at once', async () => {
  const seen: boolean[] = [];
  const warnings = await warningsOf(async () => {
    const fetchSlow = (async (_url: string, init: { signal: AbortSignal }) => {
      await new Promise((r) => setTimeout(r, 50));
      seen.push(init.signal.aborted);
      return new Response('{}');
    }) as unknown as typeof fetch;
    const w = webhookSink({ url: 'http://127.0.0.1:9/', timeoutMs: HUGE, flushMs: 60_000, fetch: fetchSlow, warn: () => {} });
    w.write({} as never, '{"a":1}');
    await w.flush();
    await w.close();
  });
  assert.equal(seen, [false]);
  assert.equal(warnings, []);
});

test('HTTP transport durations from claw.runtime.yaml are clamped where they are resolved', () => {
  const s = resolveHttpSettings(parseHttpUrl('http://127.0.0.1:0'), {
    limits: { headers_timeout_ms: HUGE, request_timeout_ms: HUGE, idle_timeout_ms: HUGE },
    sse: { keepalive_ms: HUGE },
  } as never);
  assert.equal([s.headersTimeoutMs, s.requestTimeoutMs, s.idleTimeoutMs, s.keepaliveMs], [MAX_TIMER_MS, MAX_TIMER_MS, MAX_TIMER_MS, MAX_TIMER_MS]);
});

test.run();
