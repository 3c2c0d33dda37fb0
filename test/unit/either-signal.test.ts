// eitherSignal (src/kernel/either-signal.ts): aborted when either input is, with the first reason, on runtimes
// with AbortSignal.any and without it (Node 18.0–18.16: the fallback, forced here); dispose() unhooks the
// fallback, so a session signal does not collect a listener per tool call.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eitherSignal } from '../../src/kernel/either-signal.ts';

for (const [label, native] of [['AbortSignal.any', undefined], ['fallback', null]] as const) {
  test(`${label}: either input aborts it, with that input's reason`, () => {
    for (const which of [0, 1]) {
      const a = new AbortController();
      const b = new AbortController();
      const e = native === null ? eitherSignal(a.signal, b.signal, null) : eitherSignal(a.signal, b.signal);
      assert.not.ok(e.signal.aborted);
      (which === 0 ? a : b).abort(`stop ${which}`);
      assert.ok(e.signal.aborted);
      assert.is(e.signal.reason, `stop ${which}`);
      e.dispose();
    }
  });

  test(`${label}: an input aborted before is aborted at once`, () => {
    const a = new AbortController();
    a.abort('early');
    const e = native === null ? eitherSignal(a.signal, new AbortController().signal, null) : eitherSignal(a.signal, new AbortController().signal);
    assert.ok(e.signal.aborted);
    assert.is(e.signal.reason, 'early');
  });
}

test('fallback: dispose() removes its listeners from a long-lived signal', () => {
  const session = new AbortController();
  let added = 0;
  let removed = 0;
  const add = session.signal.addEventListener.bind(session.signal);
  const remove = session.signal.removeEventListener.bind(session.signal);
  session.signal.addEventListener = ((...args: Parameters<typeof add>) => (added++, add(...args))) as typeof add;
  session.signal.removeEventListener = ((...args: Parameters<typeof remove>) => (removed++, remove(...args))) as typeof remove;
  for (let i = 0; i < 100; i++) eitherSignal(session.signal, new AbortController().signal, null).dispose();
  assert.is(added, 100);
  assert.is(removed, 100);
});

test.run();
