// The one text/event-stream parser (src/protocol/sse.ts) the MCP, A2A and provider clients share: WHATWG HTML
// §9.2.6 line ends, fields and dispatch, fed in pieces cut anywhere, and the per-event byte cap.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_MAX_EVENT_BYTES, SseEventTooLarge, SseParser } from '../../src/protocol/sse.ts';

const test = suite('sse');

/** Every event of `chunks`, fed one after the other. */
const events = (chunks: (string | Uint8Array)[], max?: number) => {
  const p = new SseParser(max);
  return chunks.flatMap((c) => p.push(c));
};

test('fields: data lines joined with \\n, comments, event, id, retry; an event without data is not dispatched', () => {
  const p = new SseParser(1 << 20);
  assert.equal(p.push(': comment\r\nid: 7\r\nretry: 250\r\ndata: {"a":\r\ndata: 1}\r\n\r\n'), [{ event: 'message', data: '{"a":\n1}', id: '7' }]);
  assert.is(p.retryMs, 250);
  assert.equal(p.push('event: ping\ndata: x\n'), []);
  assert.equal(p.push('\n'), [{ event: 'ping', data: 'x', id: '7' }]);
  // The type does not carry over; `data` without a colon is an empty data line; one space after the colon is dropped, not two.
  assert.equal(p.push('id: 8\ndata\n\ndata:  two\nretry: soon\nunknown: field\n\n'), [
    { event: 'message', data: '', id: '8' },
    { event: 'message', data: ' two', id: '8' },
  ]);
  assert.is(p.retryMs, 250, 'a retry that is not digits is ignored');
  // An id with no data primes resumption: no event, but the id is kept; an id with NUL is ignored.
  assert.equal(p.push('id: 9\n\nid: a\0b\n\n'), []);
  assert.is(p.lastEventId, '9');
});

test('line ends: CRLF, LF and CR, each split across chunks at every position', () => {
  const stream = '\ufeffdata: one\r\n\r\ndata: two\n\ndata: th\u00e9\rdata: ree\r\r: c\r\ndata: four\n\r\n';
  const want = ['one', 'two', 'th\u00e9\nree', 'four'];
  const bytes = new TextEncoder().encode(stream);
  for (let cut = 0; cut <= bytes.length; cut++) {
    assert.equal(events([bytes.subarray(0, cut), bytes.subarray(cut)]).map((e) => e.data), want, `bytes cut at ${cut}`);
    assert.equal(events([stream.slice(0, cut), stream.slice(cut)]).map((e) => e.data), want, `text cut at ${cut}`);
  }
  // One byte at a time: a multi-byte character and every CRLF are split.
  assert.equal(events([...bytes].map((b) => Uint8Array.of(b))).map((e) => e.data), want);
});

const STREAM =
  '\uFEFF: keep-alive comment\r\n' +
  'event: first\r\ndata: line one\r\ndata: line two\r\n\r\n' +
  'data:no-space\n\n' +
  'data\n\n' + // a field with no colon: data is the empty string
  'event: only-event\n\n' + // no data: never dispatched
  'id: 7\rdata: cr only\r\r' +
  'data:  two spaces keep one\n' +
  'unknown: x\nretry: 10\n\n' +
  'data: {"a":"\u00e9 \u2713 \ud834\udd1e"}\n\n' +
  'data: never finished'; // no blank line at the end: discarded

const EXPECTED = [
  { event: 'first', data: 'line one\nline two', id: undefined },
  { event: 'message', data: 'no-space', id: undefined },
  { event: 'message', data: '', id: undefined },
  { event: 'message', data: 'cr only', id: '7' },
  { event: 'message', data: ' two spaces keep one', id: '7' },
  { event: 'message', data: '{"a":"\u00e9 \u2713 \ud834\udd1e"}', id: '7' },
];

test('a whole stream, cut at every offset, and one character at a time: the same events', () => {
  assert.equal(events([STREAM]), EXPECTED);
  for (let i = 0; i <= STREAM.length; i++) assert.equal(events([STREAM.slice(0, i), STREAM.slice(i)]), EXPECTED, `cut at ${i}`);
  assert.equal(events([...STREAM]), EXPECTED);
});

test('a CR that ends a chunk dispatches at once; the LF that follows is not a second line end', () => {
  const p = new SseParser();
  assert.equal(p.push('data: x\r'), []);
  assert.equal(p.push('\r'), [{ event: 'message', data: 'x', id: undefined }]);
  assert.equal(p.push('\n'), []);
  assert.equal(p.push('data: y\n\n'), [{ event: 'message', data: 'y', id: undefined }]);
});

test('BOM: one leading BOM is dropped (bytes or text), a second is part of the field name', () => {
  assert.equal(events([Uint8Array.of(0xef, 0xbb), Uint8Array.of(0xbf), 'data: a\n\n']).map((e) => e.data), ['a']);
  assert.equal(events(['\ufeff\ufeffdata: a\n\n', 'data: b\n\n']).map((e) => e.data), ['b']);
});

test('an unterminated event at the end of the stream is not dispatched', () => {
  assert.equal(events(['data: a\n\ndata: tail\n']).map((e) => e.data), ['a']);
});

test('the cap: an event whose data passes it throws, counted in UTF-8 bytes and across chunks', () => {
  assert.is(new SseParser().maxEventBytes, DEFAULT_MAX_EVENT_BYTES);
  // Exactly the cap (data lines joined with \n) passes; one byte more does not.
  assert.equal(events(['data: 12345\ndata: 6789\n\n'], 10).map((e) => e.data), ['12345\n6789']);
  const e = (() => {
    try {
      events(['data: 12345\ndata: 67890\n\n'], 10);
    } catch (err) {
      return err;
    }
  })();
  assert.instance(e, SseEventTooLarge);
  assert.is((e as SseEventTooLarge).limit, 10);
  assert.match((e as Error).message, /over 10 bytes/);
  // Three bytes per character: 4 characters are 12 bytes.
  assert.throws(() => events(['data: \u20ac\u20ac\u20ac\u20ac\n\n'], 10), (x: unknown) => x instanceof SseEventTooLarge);
  // Many events each under the cap are fine: the count starts again at each dispatch.
  assert.is(events(Array.from({ length: 100 }, () => 'data: 123456789\n\n'), 10).length, 100);
});

test('the cap holds for a line that never ends: nothing is buffered past it', () => {
  const p = new SseParser(1000);
  assert.throws(() => {
    for (let i = 0; i < 10_000; i++) p.push('data: ' + 'x'.repeat(94));
  }, /over 1000 bytes/);
  // Comments count too while unterminated: a keep-alive that never ends is no exception.
  const q = new SseParser(1000);
  assert.throws(() => {
    for (let i = 0; i < 10_000; i++) q.push(i === 0 ? ':' : 'x'.repeat(100));
  }, /over 1000 bytes/);
});

test.run();
