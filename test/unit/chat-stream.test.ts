// claw chat on a terminal (src/cli/chat-display.ts): the progress line and the streamed native answer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { StreamView, thinking } from '../../src/cli/chat-display.ts';

function view() {
  const out: string[] = [];
  let before = 0;
  const v = new StreamView((t) => out.push(t), (t) => t.replace(/\u001b/g, '\ufffd'), () => before++);
  return { v, out, before: () => before };
}
const native = (request = 1, attempt = 1) => ({ provider: 'p', attempt, mode: 'native', request });

test('native text is shown as it arrives, and not printed again when it is the validated reply', () => {
  const { v, out, before } = view();
  for (const t of ['Hel', 'lo', ' there\u001b[2J']) v.onDelta(t, native());
  assert.equal(out, ['Hel', 'lo', ' there\ufffd[2J']);
  assert.is(before(), 1, 'the progress line is cleared once, before the first text');
  assert.is(v.finish('Hello there\u001b[2J'), false);
  assert.equal(out.at(-1), '\n');
});

test('JSON, fences and an open <think> block are never shown; a think block is skipped once closed', () => {
  const { v, out } = view();
  v.onDelta('{"tool_call":', native());
  v.onDelta('{}}', native());
  assert.equal(out, []);
  assert.is(v.finish('x'), true);
  v.onDelta('<think>plan', native(2));
  assert.equal(out, []);
  v.onDelta('</think>\nHi', native(2));
  assert.equal(out, ['Hi']);
  const j = view();
  j.v.onDelta('Hello', { provider: 'p', attempt: 1, mode: 'json_schema', request: 1 });
  assert.equal(j.out, [], 'JSON modes are validated before anything is shown');
});

test('a long answer in tiny deltas costs each delta its own length: 70,000 of them are shown in well under a second', () => {
  // Each delta re-read the whole text so far (trimStart, the <think> check): 70,000 two-character deltas held
  // the event loop 6.6 s, 80,000 13 s.
  const { v, out } = view();
  const started = performance.now();
  for (let i = 0; i < 70_000; i++) v.onDelta('ab', native());
  const ms = performance.now() - started;
  assert.ok(ms < 500, `${Math.round(ms)} ms`);
  assert.is(out.join('').length, 140_000);
  assert.is(v.finish('ab'.repeat(70_000)), false);
  // The start is decided from pieces as they come: a <think> tag and its end cut anywhere, blanks, a fence.
  const t = view();
  for (const d of ['  <th', 'ink>pl', 'an</th', 'in', 'k>', '\n ', ' Hi', ' there']) t.v.onDelta(d, native());
  assert.equal(t.out, ['Hi', ' there']);
  for (const d of ['<', 'b>bold']) t.v.onDelta(d, native(2));
  assert.equal(t.out.slice(3), ['<b>bold']);
  for (const d of [' ', '`', '``json']) t.v.onDelta(d, native(3));
  assert.is(t.out.length, 5, 'a fence is not shown');
});

test('a new request (after a tool call, a retry or a fallback) starts over; the reply is then printed whole', () => {
  const { v, out } = view();
  v.onDelta('Let me check', native(1));
  v.onDelta('It is 21 °C', native(2));
  assert.equal(out, ['Let me check', '\n', 'It is 21 °C']);
  assert.is(v.finish('It is 21 °C'), true);
});

test('the progress line: nothing for 300 ms, then redrawn in place, cleared on stop', () => {
  let now = 0;
  let tick: () => void = () => {};
  const written: string[] = [];
  const p = thinking((s) => written.push(s), { setInterval: ((fn: () => void) => ((tick = fn), 1)) as never, clearInterval: (() => {}) as never, now: () => now });
  now = 200;
  tick();
  assert.equal(written, []);
  now = 2100;
  tick();
  assert.equal(written, ['\r| thinking… 2s']);
  p.stop();
  assert.is(written.at(-1), `\r${' '.repeat('| thinking… 2s'.length)}\r`);
});

test.run();
