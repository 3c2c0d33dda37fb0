// src/kernel/session-abort.ts: the session's abort behaves as an AbortController whose signal is made on demand.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lazyAbort } from '../../src/kernel/session-abort.ts';

test('no AbortController until the signal is asked for; then one, the same signal every time', () => {
  const Real = globalThis.AbortController;
  let made = 0;
  globalThis.AbortController = class extends Real {
    constructor() {
      super();
      made++;
    }
  };
  try {
    const a = lazyAbort();
    assert.is(made, 0);
    const s = a.signal;
    assert.is(made, 1);
    assert.is(a.signal, s);
    assert.is(s.aborted, false);
    a.abort(new Error('session over'));
    assert.is(s.aborted, true);
    assert.is((s.reason as Error).message, 'session over');
    assert.is(made, 1);
  } finally {
    globalThis.AbortController = Real;
  }
});

test('aborted before anyone asked: the signal made afterwards is already aborted, with that reason', () => {
  const a = lazyAbort();
  const why = new Error('stopped');
  a.abort(why);
  a.abort(new Error('second'));
  assert.is(a.signal.aborted, true);
  assert.is(a.signal.reason, why, 'the first reason stays, as with AbortController');
});

test('no reason: the same default reason an AbortController gives (an AbortError)', () => {
  const a = lazyAbort();
  a.abort();
  const c = new AbortController();
  c.abort();
  assert.is((a.signal.reason as Error).name, (c.signal.reason as Error).name);
  assert.is((a.signal.reason as Error).name, 'AbortError');
  const b = lazyAbort();
  const s = b.signal;
  b.abort();
  assert.is((s.reason as Error).name, 'AbortError');
});

test('listeners on the signal see the abort', () => {
  const a = lazyAbort();
  let seen = 0;
  a.signal.addEventListener('abort', () => seen++);
  a.abort();
  a.abort();
  assert.is(seen, 1);
});

test.run();
