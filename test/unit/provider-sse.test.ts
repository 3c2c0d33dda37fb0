// SSE parser (src/provider/sse.ts): the WHATWG event-stream rules, fed whole and cut at every offset.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SseParser, type SseEvent } from '../../src/provider/sse.ts';

function parse(chunks: string[]): SseEvent[] {
  const out: SseEvent[] = [];
  const p = new SseParser((e) => out.push(e));
  for (const c of chunks) p.push(c);
  return out;
}

const STREAM =
  '\uFEFF: keep-alive comment\r\n' +
  'event: first\r\ndata: line one\r\ndata: line two\r\n\r\n' +
  'data:no-space\n\n' +
  'data\n\n' + // a field with no colon: data is the empty string
  'event: only-event\n\n' + // no data: never dispatched
  'id: 7\rdata: cr only\r\r' +
  'data:  two spaces keep one\n' +
  'unknown: x\nretry: 10\n\n' +
  'data: {"a":"é ✓ 𝄞"}\n\n' +
  'data: never finished'; // no blank line at the end: discarded

const EXPECTED: SseEvent[] = [
  { event: 'first', data: 'line one\nline two' },
  { event: 'message', data: 'no-space' },
  { event: 'message', data: '' },
  { event: 'message', data: 'cr only', id: '7' },
  { event: 'message', data: ' two spaces keep one', id: '7' },
  { event: 'message', data: '{"a":"é ✓ 𝄞"}', id: '7' },
];

test('whole stream: comments, CRLF/CR/LF, multi-line data, event names, ids, BOM, unterminated event dropped', () => {
  assert.equal(parse([STREAM]), EXPECTED);
});

test('cut at every single offset (including between CR and LF) gives the same events', () => {
  for (let i = 0; i <= STREAM.length; i++) {
    assert.equal(parse([STREAM.slice(0, i), STREAM.slice(i)]), EXPECTED, `cut at ${i}`);
  }
});

test('one character at a time', () => {
  assert.equal(parse([...STREAM]), EXPECTED);
});

test('CR at the end of one chunk and LF at the start of the next is one line break, not two', () => {
  assert.equal(parse(['data: a\r', '\ndata: b\r', '\n\r', '\n']), [{ event: 'message', data: 'a\nb' }]);
});

test('a BOM only counts at the very start: later, "\uFEFFdata" is an unknown field and ignored', () => {
  assert.equal(parse(['', '\uFEFFdata: x\n\n', '\uFEFFdata: y\n\n']), [{ event: 'message', data: 'x' }]);
});

test('an over-long line is refused', () => {
  const p = new SseParser(() => {});
  assert.throws(() => p.push('data: ' + 'x'.repeat(4 * 1024 * 1024)), /longer than/);
});

test.run();
