import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Lifecycle, STATES, type LifecycleState, type TransitionEvent } from '../../src/kernel/lifecycle.ts';

function make(start = 0) {
  let now = start;
  const events: TransitionEvent[] = [];
  const l = new Lifecycle(() => now, (e) => events.push(e));
  return { l, events, set: (t: number) => (now = t), add: (d: number) => (now += d) };
}

const LEGAL: [LifecycleState, LifecycleState][] = [
  ['INIT', 'STARTING'],
  ['STARTING', 'READY'],
  ['STARTING', 'ERROR'],
  ['READY', 'STOPPING'],
  ['READY', 'ERROR'],
  ['STOPPING', 'STOPPED'],
  ['STOPPED', 'STARTING'],
  ['ERROR', 'STOPPING'],
  ['ERROR', 'STARTING'],
];

/** Drive a fresh lifecycle to `s` through legal transitions. */
function reach(l: Lifecycle, s: LifecycleState) {
  const path: Record<LifecycleState, LifecycleState[]> = {
    INIT: [],
    STARTING: ['STARTING'],
    READY: ['STARTING', 'READY'],
    ERROR: ['STARTING', 'ERROR'],
    STOPPING: ['STARTING', 'READY', 'STOPPING'],
    STOPPED: ['STARTING', 'READY', 'STOPPING', 'STOPPED'],
  };
  for (const n of path[s]) l.to(n);
  assert.is(l.state, s);
}

test('starts in INIT', () => {
  assert.is(make().l.state, 'INIT');
  assert.equal([...STATES], ['INIT', 'STARTING', 'READY', 'STOPPING', 'STOPPED', 'ERROR']);
});

test('every legal transition is accepted', () => {
  for (const [from, to] of LEGAL) {
    const { l } = make();
    reach(l, from);
    l.to(to);
    assert.is(l.state, to, `${from} → ${to}`);
  }
});

test('every other transition throws and leaves the state unchanged', () => {
  const legal = new Set(LEGAL.map(([a, b]) => `${a}>${b}`));
  let checked = 0;
  for (const from of STATES) {
    for (const to of STATES) {
      if (legal.has(`${from}>${to}`)) continue;
      const { l, events } = make();
      reach(l, from);
      const before = events.length;
      assert.throws(() => l.to(to), /illegal lifecycle transition/, `${from} → ${to}`);
      assert.is(l.state, from);
      assert.is(events.length, before, 'no event for a refused transition');
      checked++;
    }
  }
  assert.is(checked, 36 - LEGAL.length);
});

test('transition events carry from, to and the time spent in the previous state', () => {
  const { l, events, add } = make(1000);
  add(5);
  l.to('STARTING');
  add(2340.4);
  l.to('READY');
  assert.equal(events, [
    { from: 'INIT', to: 'STARTING', duration_ms: 5 },
    { from: 'STARTING', to: 'READY', duration_ms: 2340 },
  ]);
});

test('uptime: 0 before READY, then time since READY (floored)', () => {
  const { l, add } = make(500);
  assert.is(l.uptimeMs(), 0);
  l.to('STARTING');
  add(100);
  assert.is(l.uptimeMs(), 0, 'STARTING is not uptime');
  l.to('READY');
  assert.is(l.uptimeMs(), 0);
  add(45_000.9);
  assert.is(l.uptimeMs(), 45_000);
});

test('uptime keeps counting through STOPPING, restarts on a new session', () => {
  const { l, add } = make();
  reach(l, 'READY');
  add(1000);
  l.to('STOPPING');
  add(500);
  assert.is(l.uptimeMs(), 1500);
  l.to('STOPPED');
  l.to('STARTING');
  add(100);
  l.to('READY');
  add(7);
  assert.is(l.uptimeMs(), 7);
});

test('uptime never negative with a clock going backwards', () => {
  const { l, set } = make(1000);
  reach(l, 'READY');
  set(10);
  assert.is(l.uptimeMs(), 0);
});

test.run();
