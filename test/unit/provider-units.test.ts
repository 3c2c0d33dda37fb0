// Small pure pieces of src/provider: token estimate, backoff, Retry-After, raw JSON spans.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rawValueAt } from '../../src/provider/json-span.ts';
import { MAX_CLOCK_WAIT_MS, backoffMs, retryAfterMs } from '../../src/provider/retry.ts';
import { estimateMessage, estimateText, trimToBudget, utf8Bytes } from '../../src/provider/tokens.ts';
import { MinuteWindow } from '../../src/provider/limits.ts';

test('utf8Bytes and the estimate: ceil(bytes / 3) + 4 per message', () => {
  assert.equal([utf8Bytes('abc'), utf8Bytes('é'), utf8Bytes('✓'), utf8Bytes('𝄞'), utf8Bytes('\ud800')], [3, 2, 3, 4, 3]);
  assert.equal([estimateText(''), estimateText('a'), estimateText('abcd'), estimateText('日本語')], [0, 1, 2, 3]);
  assert.is(estimateMessage({ role: 'user', content: 'hello world' }), 4 + 4);
  assert.is(estimateMessage({ role: 'assistant', content: '', toolCall: { name: 'echo', arguments: '{"a":1}' } }), 4 + 0 + 2 + 3);
});

test('trimToBudget: nothing dropped when it fits; undefined when the protected part alone does not', () => {
  const m = [{ role: 'system' as const, content: 'x'.repeat(30) }, { role: 'user' as const, content: 'y'.repeat(30) }];
  assert.equal(trimToBudget(m, 28), { messages: m, dropped: 0, estimate: 28 });
  assert.is(trimToBudget(m, 27), undefined);
});

test('backoff: exponential capped at 30 s, equal jitter in [d/2, d]', () => {
  assert.equal([0, 1, 2, 3, 4, 5, 6].map((i) => backoffMs(undefined, i, () => 0)), [500, 1000, 2000, 4000, 8000, 15000, 15000]);
  assert.equal([0, 1, 5].map((i) => backoffMs(undefined, i, () => 0.999999)), [1000, 2000, 30000]);
  assert.is(backoffMs({ backoff: 'constant', initial_delay_ms: 0 }, 3, () => 0.5), 0);
});

test('Retry-After: seconds, fractional, HTTP-date, retry-after-ms; junk ignored', () => {
  const h = (o: Record<string, string>) => ({ get: (k: string) => o[k] ?? null });
  const now = Date.parse('2026-02-22T10:00:00Z');
  assert.is(retryAfterMs(h({ 'retry-after': '3' }), now), 3000);
  assert.is(retryAfterMs(h({ 'retry-after': '0.5' }), now), 500);
  assert.is(retryAfterMs(h({ 'retry-after': 'Sun, 22 Feb 2026 10:00:07 GMT' }), now), 7000);
  // In the past by this host's clock: the clock is not trusted, the caller's backoff applies.
  assert.is(retryAfterMs(h({ 'retry-after': 'Sun, 22 Feb 2026 09:00:00 GMT' }), now), undefined);
  assert.is(retryAfterMs(h({ 'retry-after-ms': '250', 'retry-after': '3' }), now), 250);
  assert.is(retryAfterMs(h({ 'retry-after': 'soon' }), now), undefined);
  assert.is(retryAfterMs(h({}), now), undefined);
});

test('Retry-After as an HTTP-date on a board whose clock is unset (1970) or far ahead: never years, never a hammering 0', () => {
  const h = (o: Record<string, string>) => ({ get: (k: string) => o[k] ?? null });
  const date = 'Sun, 22 Feb 2026 10:00:07 GMT';
  const served = 'Sun, 22 Feb 2026 10:00:00 GMT';
  const unset = 0; // 1970-01-01: a board without a real-time clock, before NTP
  const ahead = Date.parse('2040-01-01T00:00:00Z');
  // Without the server's Date header, a wait decades long or in the past is not believed: undefined (backoff).
  assert.is(retryAfterMs(h({ 'retry-after': date }), unset), undefined);
  assert.is(retryAfterMs(h({ 'retry-after': date }), ahead), undefined);
  // With it, the wait is the server's own, whatever this clock says.
  for (const now of [unset, ahead, Date.parse(served)]) assert.is(retryAfterMs(h({ 'retry-after': date, date: served }), now), 7000);
  assert.is(retryAfterMs(h({ 'retry-after': served, date }), unset), 0);
  // A long wait the server itself means stays long (the attempt loop then fails over instead of waiting).
  assert.is(retryAfterMs(h({ 'retry-after': 'Sun, 22 Feb 2026 12:00:00 GMT', date: served }), unset), 7_200_000);
  // Against a sane local clock: trusted up to MAX_CLOCK_WAIT_MS (an hour), not past it.
  const now = Date.parse(served);
  assert.is(retryAfterMs(h({ 'retry-after': 'Sun, 22 Feb 2026 11:00:00 GMT' }), now), MAX_CLOCK_WAIT_MS);
  assert.is(retryAfterMs(h({ 'retry-after': 'Sun, 22 Feb 2026 11:00:01 GMT' }), now), undefined);
  assert.is(retryAfterMs(h({ 'retry-after': date, date: 'garbage' }), now), 7000);
});

test('rawValueAt: exact source text by path; last duplicate wins like JSON.parse; missing → undefined', () => {
  const t = ' { "a" : [ 1 , { "b\\"c" : {"x":1,"x":2} } , "s,]}" ] , "a2": 3e1 , "d":1, "d" : { "k" : "v" } } ';
  assert.is(rawValueAt(t, ['a', 1, 'b"c']), '{"x":1,"x":2}');
  assert.is(rawValueAt(t, ['a', 2]), '"s,]}"');
  assert.is(rawValueAt(t, ['a2']), '3e1');
  assert.is(rawValueAt(t, ['d']), '{ "k" : "v" }');
  assert.is(rawValueAt(t, ['a', 3]), undefined);
  assert.is(rawValueAt(t, ['zz']), undefined);
  assert.is(rawValueAt(t, ['a', 'b']), undefined);
});

test('MinuteWindow: a request recorded at t stops counting at t + 60 s', () => {
  const w = new MinuteWindow();
  w.take(0);
  w.take(1000);
  assert.is(w.wait(2, 30_000), 30_000);
  assert.is(w.wait(2, 60_000), 0);
  assert.is(w.wait(3, 30_000), 0);
});

test.run();
