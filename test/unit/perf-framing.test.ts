// The faster NdjsonDecoder (whole-chunk decoding, no copies for lines inside a chunk) against the
// previous line-by-line implementation, kept here as the reference: random lines (BOMs, CRLF, blank
// keep-alives, invalid UTF-8, multi-byte characters, oversize lines) fed in random chunkings must
// give exactly the same events, and feed()/finish() must agree with push()/end().
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NdjsonDecoder, type FrameEvent } from '../../src/protocol/framing.ts';
import { seededRandom } from '../helpers/rng.ts';

/** The previous decoder, verbatim. */
class ReferenceDecoder {
  private parts: Uint8Array[] = [];
  private size = 0;
  private dropping = 0;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });
  constructor(private readonly maxBytes: number) {}
  push(chunk: Uint8Array): FrameEvent[] {
    const out: FrameEvent[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      this.take(chunk.subarray(start, end));
      if (nl === -1) break;
      this.finishLine(out);
      start = nl + 1;
    }
    return out;
  }
  end(): FrameEvent[] {
    const out: FrameEvent[] = [];
    if (this.size > 0 || this.dropping > 0) this.finishLine(out);
    return out;
  }
  private take(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.dropping > 0 || this.size + bytes.length > this.maxBytes) {
      this.dropping += this.size + bytes.length;
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(bytes.slice());
    this.size += bytes.length;
  }
  private finishLine(out: FrameEvent[]): void {
    if (this.dropping > 0) {
      out.push({ type: 'oversize', bytes: this.dropping, limit: this.maxBytes });
      this.dropping = 0;
      return;
    }
    const bytes = this.parts.length === 1 ? this.parts[0] : concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    let text: string;
    try {
      text = this.utf8.decode(bytes);
    } catch {
      out.push({ type: 'encoding' });
      return;
    }
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return;
    out.push({ type: 'frame', text });
  }
}
function concat(parts: Uint8Array[], size: number): Uint8Array {
  const buf = new Uint8Array(size);
  let off = 0;
  for (const p of parts) {
    buf.set(p, off);
    off += p.length;
  }
  return buf;
}

const enc = new TextEncoder();
const PIECES: (string | number[])[] = [
  '{"jsonrpc":"2.0","id":1,"method":"claw.status"}', '[1,2]', 'x', '   ', '\t', '', '\r', 'é€𝄞日本', '\ufeff', '\ufeff\ufeff', '\u00a0', '\u2028', ' {"a":1} ',
  [0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xef, 0xbb, 0xbf], 'y'.repeat(40),
];

function randomStream(next: () => number): Uint8Array {
  const bytes: number[] = [];
  const lines = 1 + Math.floor(next() * 30);
  for (let i = 0; i < lines; i++) {
    const parts = Math.floor(next() * 4);
    for (let j = 0; j < parts; j++) {
      const p = PIECES[Math.floor(next() * PIECES.length)];
      bytes.push(...(typeof p === 'string' ? enc.encode(p) : p));
    }
    if (next() < 0.2) bytes.push(0x0d);
    if (i < lines - 1 || next() < 0.7) bytes.push(0x0a);
  }
  return Uint8Array.from(bytes);
}

function chunked(bytes: Uint8Array, next: () => number, asBuffer: boolean): Uint8Array[] {
  const out: Uint8Array[] = [];
  let i = 0;
  while (i < bytes.length) {
    const n = next() < 0.3 ? 1 + Math.floor(next() * 3) : 1 + Math.floor(next() * 200);
    const part = bytes.slice(i, i + n);
    out.push(asBuffer ? Buffer.from(part) : part);
    i += n;
  }
  if (next() < 0.1) out.splice(Math.floor(next() * out.length), 0, new Uint8Array(0));
  return out;
}

test('same events as the line-by-line reference: 5,000 random streams, random chunkings and caps', () => {
  const next = seededRandom(42);
  for (let round = 0; round < 5000; round++) {
    const stream = randomStream(next);
    const cap = next() < 0.5 ? 4 * 1024 * 1024 : 1 + Math.floor(next() * 80);
    const chunks = chunked(stream, next, next() < 0.5);
    const ref = new ReferenceDecoder(cap);
    const dec = new NdjsonDecoder(cap);
    const want: FrameEvent[] = [];
    const got: FrameEvent[] = [];
    for (const c of chunks) {
      want.push(...ref.push(c));
      got.push(...dec.push(c));
    }
    want.push(...ref.end());
    got.push(...dec.end());
    assert.equal(got, want, `round ${round}, cap ${cap}, stream ${JSON.stringify(Array.from(stream))}`);
  }
});

test('feed()/finish() report what push()/end() return, and a reused chunk buffer cannot corrupt a pending line', () => {
  const a = new NdjsonDecoder();
  const b = new NdjsonDecoder();
  const got: FrameEvent[] = [];
  const sink = {
    frame: (text: string) => got.push({ type: 'frame', text }),
    oversize: (bytes: number, limit: number) => got.push({ type: 'oversize', bytes, limit }),
    encoding: () => got.push({ type: 'encoding' }),
  };
  const want: FrameEvent[] = [];
  const buf = Buffer.alloc(64);
  for (const part of ['{"a":1}\n{"b"', ':2}\n\n{"c":3}\r\n{"d"', ':4}']) {
    buf.fill(0);
    const n = buf.write(part);
    const view = buf.subarray(0, n);
    want.push(...a.push(Buffer.from(view)));
    b.feed(view, sink);
    buf.fill(0x20); // the caller reuses its buffer
  }
  want.push(...a.end());
  b.finish(sink);
  assert.equal(got, want);
  assert.equal(
    got.map((e) => (e.type === 'frame' ? e.text : e.type)),
    ['{"a":1}', '{"b":2}', '{"c":3}', '{"d":4}'],
  );
});

test.run();
