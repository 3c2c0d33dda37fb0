import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Heartbeat, DEFAULT_HEARTBEAT_MS } from '../../src/kernel/heartbeat.ts';
import type { LifecycleState } from '../../src/kernel/lifecycle.ts';
import type { JsonRpcNotification } from '../../src/protocol/jsonrpc.ts';
import { FakeClock } from './helpers/fakes.ts';

function setup() {
  const clock = new FakeClock();
  let state: LifecycleState = 'READY';
  const readyAt = clock.monotonic();
  const sent: JsonRpcNotification[] = [];
  const hb = new Heartbeat(clock, () => ({ state, uptime_ms: clock.monotonic() - readyAt }), (n) => sent.push(n));
  return { clock, hb, sent, setState: (s: LifecycleState) => (state = s) };
}

test('default interval is 30 s (spec §9.3.1)', () => {
  assert.is(DEFAULT_HEARTBEAT_MS, 30_000);
});

test('first beat after one full interval, then every interval', () => {
  const { clock, hb, sent } = setup();
  hb.start(1000);
  assert.is(sent.length, 0, 'nothing at start');
  clock.advance(999);
  assert.is(sent.length, 0, 'nothing before a full interval');
  clock.advance(1);
  assert.is(sent.length, 1);
  clock.advance(3000);
  assert.is(sent.length, 4);
});

test('beat shape: claw.heartbeat notification with state, uptime_ms and an ISO UTC timestamp', () => {
  const { clock, hb, sent } = setup();
  hb.start(30_000);
  clock.advance(30_000);
  assert.equal(sent[0], {
    jsonrpc: '2.0',
    method: 'claw.heartbeat',
    params: { state: 'READY', uptime_ms: 30_000, timestamp: new Date(clock.now()).toISOString() },
  });
  assert.not.ok('id' in sent[0]);
  assert.match((sent[0].params as any).timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
});

test('beats only while READY', () => {
  const { clock, hb, sent, setState } = setup();
  hb.start(100);
  for (const s of ['STARTING', 'STOPPING', 'STOPPED', 'ERROR', 'INIT'] as LifecycleState[]) {
    setState(s);
    clock.advance(100);
  }
  assert.is(sent.length, 0);
  setState('READY');
  clock.advance(100);
  assert.is(sent.length, 1);
});

test('stop() stops, and is idempotent; no timer left behind', () => {
  const { clock, hb, sent } = setup();
  hb.start(100);
  clock.advance(100);
  hb.stop();
  hb.stop();
  clock.advance(10_000);
  assert.is(sent.length, 1);
  assert.is(clock.pending, 0);
});

test('start() twice keeps a single timer (restart resets the interval)', () => {
  const { clock, hb, sent } = setup();
  hb.start(100);
  clock.advance(50);
  hb.start(100);
  assert.is(clock.pending, 1);
  clock.advance(50);
  assert.is(sent.length, 0, 'the first timer was cancelled');
  clock.advance(50);
  assert.is(sent.length, 1);
});

test.run();
