// claw.shutdown while a slow request is in flight, end to end now that Level 2 gives a
// slow request to make: drained when it finishes in time, not drained (and cancelled) when it doesn't.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { agent, manifest, processesWith } from './helpers/l2-agent.ts';
import { stderrRecords } from './helpers/e2e-util.ts';

const slow = (marker: string) => ({
  tools: `    - inline:
        name: "slow"
        description: "sleeps"
        input_schema: { type: "object", properties: { seconds: { type: "string" } } }`,
  runtime: `tools:\n  slow:\n    exec:\n      bin: /bin/sh\n      argv: ["-c", "sleep {{seconds}}; echo done; : ${marker}"]\nsandbox:\n  kill_grace_ms: 200\n`,
});

test('shutdown waits for a slow tool call that finishes within timeout_ms: drained, and its result is delivered', async () => {
  const s = slow(`claw-drain-ok-${process.pid}`);
  const a = await agent(manifest({ tools: s.tools }), s.runtime);
  try {
    const call = a.call('slow', { seconds: '0.6' }, 'slow-1', 'call');
    await new Promise((r) => setTimeout(r, 150));
    const down = await a.claw.request('claw.shutdown', { reason: 'test', timeout_ms: 5000 }, 'down');
    assert.equal(down.result, { drained: true });
    const r = await call;
    assert.equal(r.result, { content: [{ type: 'text', text: 'done\n' }] });
    // The call's reply came before the shutdown's.
    assert.ok(a.claw.messages.findIndex((m) => m.id === 'call') < a.claw.messages.findIndex((m) => m.id === 'down'));
    assert.equal((await a.claw.request('claw.status', {}, 'st')).result.state, 'STOPPED');
  } finally {
    await a.close();
  }
});

test('shutdown with a shorter timeout_ms: drained false, the slow call is cancelled and leaves nothing running', async () => {
  const marker = `claw-drain-cut-${process.pid}-${Date.now()}`;
  const s = slow(marker);
  const a = await agent(manifest({ tools: s.tools }), s.runtime);
  try {
    const call = a.call('slow', { seconds: '30' }, 'slow-2', 'call');
    await new Promise((r) => setTimeout(r, 150));
    const t0 = Date.now();
    const down = await a.claw.request('claw.shutdown', { timeout_ms: 200 }, 'down');
    assert.equal(down.result, { drained: false });
    assert.ok(Date.now() - t0 < 3000, `shutdown answered after ${Date.now() - t0} ms`);
    const r = await call;
    assert.ok(r.error, JSON.stringify(r));
    assert.is(r.error.code, -32600);
    assert.equal(r.error.data, { state: 'STOPPING', tool: 'slow' });
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(processesWith(marker), []);
  } finally {
    await a.close();
  }
});

test('durations beyond a 32-bit timer (3e9 ms, 1e300) are clamped, not turned into 1 ms; stderr stays JSON lines', async () => {
  const s = slow(`claw-drain-huge-${process.pid}`);
  const a = await agent(manifest({ tools: s.tools }), s.runtime);
  try {
    // Other methods taking durations: a swarm wait beyond its limit is refused, not overflowed.
    const wait = await a.claw.request('claw.swarm.result', { task_id: 'nope', wait_ms: 3e9 }, 'wait');
    assert.ok(wait.error, JSON.stringify(wait));
    const call = a.call('slow', { seconds: '0.6' }, 'slow-huge', 'call');
    await new Promise((r) => setTimeout(r, 150));
    const down = await a.claw.request('claw.shutdown', { reason: 'test', timeout_ms: 3_000_000_000 }, 'down');
    assert.equal(down.result, { drained: true }, 'the in-flight call was waited for, not cancelled after 1 ms');
    assert.equal((await call).result, { content: [{ type: 'text', text: 'done\n' }] });
    const again = await a.claw.request('claw.shutdown', { timeout_ms: 1e300 }, 'down2');
    assert.ok(again.result || again.error, JSON.stringify(again));
  } finally {
    await a.close();
  }
  const err = a.claw.stderr();
  stderrRecords(err); // every line parses as a JSON log record
  assert.not.ok(err.includes('TimeoutOverflowWarning'), err.slice(-1500));
});

test.run();
