// A presence that keeps failing is warned about once per error and window, not once per interval.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryHub } from '../../src/swarm/memory-bus.ts';
import { PRESENCE_WARN_EVERY_MS, SwarmNode } from '../../src/swarm/node.ts';
import { planOf } from '../../src/swarm/plan.ts';
import { captureLog, spec, type LogLine } from './swarm-fixture.ts';

function node(announceFails: () => Error | undefined) {
  let now = 1_000_000;
  const lines: LogLine[] = [];
  const hub = new MemoryHub();
  const bus = hub.connect('leader');
  const real = bus.announce.bind(bus);
  bus.announce = (p) => {
    const e = announceFails();
    return e ? Promise.reject(e) : real(p);
  };
  const n = new SwarmNode({
    bus,
    plan: planOf('team', spec({ agents: [{ identity_ref: 'leader', role: 'leader' }, { identity_ref: 'w1', role: 'worker' }] } as never)),
    runner: { run: async () => ({ status: 'completed', result: {} }) },
    log: captureLog(lines),
    clock: { now: () => now, monotonic: () => now, setInterval: () => ({ cancel() {} }) },
    timing: { ackTimeoutMs: 100, retryInitialMs: 10, retryMaxMs: 100, presencePollMs: 10, unavailableGraceMs: 0 },
    presenceMs: 1000,
    costAware: false,
    onBroadcast() {},
  });
  return { n, lines, advance: (ms: number) => void (now += ms) };
}

const presenceLines = (lines: LogLine[]) => lines.filter((l) => l.msg.startsWith('swarm presence'));

test('a presence failing at every interval: one warning, then one per window with the count, and one line when it lands again', async () => {
  let fail: Error | undefined = new Error('ENOSPC: no space left on device');
  const { n, lines, advance } = node(() => fail);
  for (let i = 0; i < 600; i++) {
    await n.announce();
    advance(1000);
  }
  let seen = presenceLines(lines);
  assert.is(seen.length, 1, '600 failed intervals inside one window: one warning');
  assert.is(seen[0].level, 'warn');
  assert.is(seen[0].fields?.failures, 1);
  advance(PRESENCE_WARN_EVERY_MS);
  await n.announce();
  seen = presenceLines(lines);
  assert.is(seen.length, 2, 'the window passed: warned again');
  assert.is(seen[1].fields?.failures, 601, 'with every failure counted');
  fail = undefined;
  await n.announce();
  await n.announce();
  seen = presenceLines(lines);
  assert.is(seen.length, 3, 'one line when it works again, none after');
  assert.is(seen[2].msg, 'swarm presence announced again');
  assert.is(seen[2].level, 'info');
  assert.is(seen[2].fields?.failures, 601);
});

test('a new error is warned at once, inside the window', async () => {
  let err = new Error('ENOSPC: no space left on device');
  const { n, lines } = node(() => err);
  await n.announce();
  await n.announce();
  err = new Error('EACCES: permission denied');
  await n.announce();
  const seen = presenceLines(lines);
  assert.is(seen.length, 2);
  assert.match(String(seen[1].fields?.error), /EACCES/);
  assert.is(seen[1].fields?.failures, 3);
});

test.run();
