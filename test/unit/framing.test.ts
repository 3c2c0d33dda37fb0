import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NdjsonDecoder, encodeFrame, DEFAULT_MAX_FRAME_BYTES, type FrameEvent } from '../../src/protocol/framing.ts';

const enc = new TextEncoder();
const b = (s: string) => enc.encode(s);
const frames = (evs: FrameEvent[]) => evs.map((e) => (e.type === 'frame' ? e.text : e));

test('default cap is 4 MiB', () => {
  assert.is(DEFAULT_MAX_FRAME_BYTES, 4 * 1024 * 1024);
});

test('one line in one chunk', () => {
  const d = new NdjsonDecoder();
  assert.equal(d.push(b('{"a":1}\n')), [{ type: 'frame', text: '{"a":1}' }]);
  assert.equal(d.end(), []);
});

test('a line split across chunks is delivered once, when complete', () => {
  const d = new NdjsonDecoder();
  assert.equal(d.push(b('{"jsonrpc":')), []);
  assert.equal(d.push(b('"2.0","id"')), []);
  assert.equal(frames(d.push(b(':1}\n'))), ['{"jsonrpc":"2.0","id":1}']);
});

test('byte-by-byte feeding', () => {
  const d = new NdjsonDecoder();
  const out: FrameEvent[] = [];
  for (const byte of b('{"x":"y"}\n{"z":2}\n')) out.push(...d.push(Uint8Array.of(byte)));
  assert.equal(frames(out), ['{"x":"y"}', '{"z":2}']);
});

test('several lines in one chunk, in order', () => {
  const d = new NdjsonDecoder();
  assert.equal(frames(d.push(b('{"a":1}\n{"a":2}\n{"a":3}\n{"a":'))), ['{"a":1}', '{"a":2}', '{"a":3}']);
  assert.equal(frames(d.push(b('4}\n'))), ['{"a":4}']);
});

test('CRLF line endings are accepted (the CR is not part of the frame)', () => {
  const d = new NdjsonDecoder();
  assert.equal(frames(d.push(b('{"a":1}\r\n{"a":2}\r'))), ['{"a":1}']);
  assert.equal(frames(d.push(b('\n'))), ['{"a":2}']);
});

test('blank and whitespace-only lines are skipped', () => {
  const d = new NdjsonDecoder();
  assert.equal(frames(d.push(b('\n\n\r\n   \n\t\n{"a":1}\n\n'))), ['{"a":1}']);
  assert.equal(d.end(), []);
});

test('empty chunks are harmless', () => {
  const d = new NdjsonDecoder();
  assert.equal(d.push(new Uint8Array(0)), []);
  assert.equal(d.push(b('{"a"')), []);
  assert.equal(d.push(new Uint8Array(0)), []);
  assert.equal(frames(d.push(b(':1}\n'))), ['{"a":1}']);
});

test('end(): a last line without a newline is still a frame', () => {
  const d = new NdjsonDecoder();
  assert.equal(frames(d.push(b('{"a":1}\n{"b":2}'))), ['{"a":1}']);
  assert.equal(frames(d.end()), ['{"b":2}']);
  assert.equal(d.end(), [], 'nothing left after end()');
});

test('end(): a trailing blank line is not a frame', () => {
  const d = new NdjsonDecoder();
  d.push(b('   '));
  assert.equal(d.end(), []);
});

test('a line of exactly the cap is accepted; one byte more is oversize', () => {
  const d = new NdjsonDecoder(10);
  assert.equal(frames(d.push(b('"12345678"\n'))), ['"12345678"']); // 10 bytes
  assert.equal(d.push(b('"123456789"\n')), [{ type: 'oversize', bytes: 11, limit: 10 }]);
});

test('oversize line: reported once with its byte count, the next line still decoded', () => {
  const d = new NdjsonDecoder(16);
  const big = 'x'.repeat(100);
  const out = d.push(b(`${big}\n{"ok":true}\n`));
  assert.equal(out, [{ type: 'oversize', bytes: 100, limit: 16 }, { type: 'frame', text: '{"ok":true}' }]);
});

test('oversize line spanning many chunks: reported once, total bytes counted, nothing buffered', () => {
  const d = new NdjsonDecoder(64);
  const out: FrameEvent[] = [];
  out.push(...d.push(b('{"a":"')));
  for (let i = 0; i < 1000; i++) out.push(...d.push(b('y'.repeat(50))));
  assert.equal(out, [], 'no event before the line ends');
  // The decoder must not keep the dropped bytes around.
  assert.ok((d as any).size <= 64, 'dropped bytes are not buffered');
  out.push(...d.push(b('"}\n{"next":1}\n')));
  assert.equal(out, [
    { type: 'oversize', bytes: 6 + 50_000 + 2, limit: 64 },
    { type: 'frame', text: '{"next":1}' },
  ]);
});

test('oversize last line without newline is reported at end()', () => {
  const d = new NdjsonDecoder(8);
  assert.equal(d.push(b('0123456789abcdef')), []);
  assert.equal(d.end(), [{ type: 'oversize', bytes: 16, limit: 8 }]);
});

test('oversize then a line that fits within the same chunk as the oversize tail', () => {
  const d = new NdjsonDecoder(8);
  assert.equal(d.push(b('0123456')), []);
  // The line crosses the cap in this chunk, then ends; the following line fits.
  assert.equal(d.push(b('789\n[1]\n')), [
    { type: 'oversize', bytes: 10, limit: 8 },
    { type: 'frame', text: '[1]' },
  ]);
});

test('invalid UTF-8 line → encoding event; neighbours unaffected', () => {
  const d = new NdjsonDecoder();
  const bad = Uint8Array.of(0x7b, 0xff, 0xfe, 0x7d, 0x0a); // {\xff\xfe}\n
  const out = [...d.push(b('[1]\n')), ...d.push(bad), ...d.push(b('[2]\n'))];
  assert.equal(out, [{ type: 'frame', text: '[1]' }, { type: 'encoding' }, { type: 'frame', text: '[2]' }]);
});

test('truncated multi-byte sequence at line end → encoding', () => {
  const d = new NdjsonDecoder();
  // "é" is C3 A9; a line ending after C3 is not valid UTF-8.
  assert.equal(d.push(Uint8Array.of(0x22, 0xc3, 0x22, 0x0a)), [{ type: 'encoding' }]);
});

test('overlong encoding and lone surrogate bytes → encoding', () => {
  const d = new NdjsonDecoder();
  assert.equal(d.push(Uint8Array.of(0xc0, 0xaf, 0x0a)), [{ type: 'encoding' }]); // overlong "/"
  assert.equal(d.push(Uint8Array.of(0xed, 0xa0, 0x80, 0x0a)), [{ type: 'encoding' }]); // U+D800
});

test('multi-byte UTF-8 split across chunks is decoded intact', () => {
  const d = new NdjsonDecoder();
  const text = '{"s":"héllo € 𝄞 日本"}';
  const bytes = b(`${text}\n`);
  const out: FrameEvent[] = [];
  // Split inside every multi-byte character: feed one byte at a time.
  for (let i = 0; i < bytes.length; i++) out.push(...d.push(bytes.subarray(i, i + 1)));
  assert.equal(frames(out), [text]);
  // And a split in the middle of the 4-byte 𝄞.
  const d2 = new NdjsonDecoder();
  const at = bytes.indexOf(0xf0) + 2;
  assert.equal(d2.push(bytes.subarray(0, at)), []);
  assert.equal(frames(d2.push(bytes.subarray(at))), [text]);
});

test('chunks are copied: mutating a pushed buffer does not corrupt the frame', () => {
  const d = new NdjsonDecoder();
  const chunk = b('{"a":1');
  d.push(chunk);
  chunk.fill(0x20);
  assert.equal(frames(d.push(b('}\n'))), ['{"a":1}']);
});

test('encodeFrame: one line, newline-terminated, no raw newline inside', () => {
  const line = encodeFrame({ jsonrpc: '2.0', id: 1, result: { s: 'a\nb\r\u2028' } });
  assert.ok(line.endsWith('\n'));
  assert.is(line.indexOf('\n'), line.length - 1);
  assert.equal(JSON.parse(line), { jsonrpc: '2.0', id: 1, result: { s: 'a\nb\r\u2028' } });
});

test.run();
