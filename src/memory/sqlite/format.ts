// On-disk formats of the durable sql.js store (layout and reasoning in durable.ts and README.md):
// snapshot = zlib-deflated SQLite image + 48-byte trailer (format 2; format 1, the plain image + 32-byte trailer,
// is still read); journal = 24-byte header + length/CRC-framed records (binary, or JSON in format 1).
import { inflateSync } from 'node:zlib';
import { ClawError } from '../../protocol/errors.ts';
import { crc32 } from './crc32.ts';
import type { BindParams } from './types.ts';
import type { DurableFs } from './durable.ts';

const SNAP_MAGIC = 'CLAWSNP1';
const SNAP2_MAGIC = 'CLAWSNP2';
const JNL_MAGIC = 'CLAWJNL1';
export const TRAILER = 32;
export const TRAILER2 = 48;
/** Snapshot body encodings of format 2. */
export const BODY_PLAIN = 0;
export const BODY_ZLIB = 1;
export const HEADER = 24;
export const EMPTY_ID = '0000000000000000';
const SQLITE_MAGIC = 'SQLite format 3\0';

const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
export const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
export const unhex = (s: string) => Uint8Array.from(s.match(/../g)!.map((x) => parseInt(x, 16)));

/**
 * Format 2: body (the image, zlib-deflated when `method` is BODY_ZLIB) + 48-byte trailer
 * "CLAWSNP2" | id (8) | body length u64 LE | image length u64 LE | crc32(image) u32 LE | method u32 LE |
 * crc32(trailer bytes 0..43) u32 LE. The CRC is over the image, so a body that inflates to other bytes is caught.
 */
export function encodeSnapshot2(body: Uint8Array, image: { length: number; crc: number }, id: string, method: number): Uint8Array {
  const out = new Uint8Array(body.length + TRAILER2);
  out.set(body, 0);
  const t = out.subarray(body.length);
  const dv = new DataView(t.buffer, t.byteOffset, TRAILER2);
  for (let i = 0; i < 8; i++) t[i] = SNAP2_MAGIC.charCodeAt(i);
  t.set(unhex(id), 8);
  dv.setUint32(16, body.length % 2 ** 32, true);
  dv.setUint32(20, Math.floor(body.length / 2 ** 32), true);
  dv.setUint32(24, image.length % 2 ** 32, true);
  dv.setUint32(28, Math.floor(image.length / 2 ** 32), true);
  dv.setUint32(32, image.crc, true);
  dv.setUint32(36, method, true);
  dv.setUint32(44, crc32(t.subarray(0, 44)), true);
  return out;
}

export interface Snapshot {
  image: Uint8Array;
  /** null for a plain SQLite file without our trailer (e.g. written by the native adapter). */
  id: string | null;
  /** Bytes of the file (body + trailer). */
  fileSize: number;
}

/** Reads and verifies a snapshot; throws 'sqlite.snapshot_missing' or 'sqlite.snapshot_corrupt' naming the file. */
export function readSnapshot(fs: DurableFs, path: string): Snapshot {
  let buf: Uint8Array;
  try {
    buf = fs.readFileSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new ClawError('sqlite.snapshot_missing', `snapshot ${path} does not exist`, { cause: e });
    throw new ClawError('sqlite.snapshot_unreadable', `cannot read snapshot ${path}: ${(e as Error).message}`, { cause: e });
  }
  const corrupt = (why: string) => new ClawError('sqlite.snapshot_corrupt', `corrupt snapshot ${path}: ${why}`);
  if (buf.length >= TRAILER2 && ascii(buf, buf.length - TRAILER2, buf.length - TRAILER2 + 8) === SNAP2_MAGIC) {
    const t = buf.subarray(buf.length - TRAILER2);
    const dv = new DataView(t.buffer, t.byteOffset, TRAILER2);
    if (dv.getUint32(44, true) !== crc32(t.subarray(0, 44))) throw corrupt('trailer checksum mismatch');
    const bodyLen = dv.getUint32(16, true) + dv.getUint32(20, true) * 2 ** 32;
    const imageLen = dv.getUint32(24, true) + dv.getUint32(28, true) * 2 ** 32;
    if (bodyLen !== buf.length - TRAILER2) throw corrupt(`body length ${buf.length - TRAILER2}, trailer says ${bodyLen}`);
    const method = dv.getUint32(36, true);
    const body = buf.subarray(0, bodyLen);
    let image: Uint8Array;
    if (method === BODY_PLAIN) image = body;
    else if (method === BODY_ZLIB) {
      try {
        image = inflateSync(body);
      } catch (e) {
        throw corrupt(`body does not inflate (${(e as Error).message})`);
      }
    } else throw corrupt(`unknown body encoding ${method}`);
    if (image.length !== imageLen) throw corrupt(`image length ${image.length}, trailer says ${imageLen}`);
    if (dv.getUint32(32, true) !== crc32(image)) throw corrupt('image checksum mismatch');
    return { image, id: hex(t.subarray(8, 16)), fileSize: buf.length };
  }
  if (buf.length >= TRAILER && ascii(buf, buf.length - TRAILER, buf.length - TRAILER + 8) === SNAP_MAGIC) {
    const t = buf.subarray(buf.length - TRAILER);
    const dv = new DataView(t.buffer, t.byteOffset, TRAILER);
    if (dv.getUint32(28, true) !== crc32(t.subarray(0, 28))) throw corrupt('trailer checksum mismatch');
    const len = dv.getUint32(16, true) + dv.getUint32(20, true) * 2 ** 32;
    if (len !== buf.length - TRAILER) throw corrupt(`image length ${buf.length - TRAILER}, trailer says ${len}`);
    const image = buf.subarray(0, len);
    if (dv.getUint32(24, true) !== crc32(image)) throw corrupt('image checksum mismatch');
    return { image, id: hex(t.subarray(8, 16)), fileSize: buf.length };
  }
  if (buf.length === 0) throw corrupt('empty file');
  if (buf.length >= 100 && ascii(buf, 0, 16) === SQLITE_MAGIC) {
    // A plain SQLite file is accepted only when whole: page-aligned, and as long as its header says.
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const pageSize = dv.getUint16(16) === 1 ? 65536 : dv.getUint16(16);
    const pages = dv.getUint32(28);
    const headerSizeValid = pages > 0 && dv.getUint32(92) === dv.getUint32(24);
    if (pageSize >= 512 && buf.length % pageSize === 0 && (!headerSizeValid || pages * pageSize === buf.length)) return { image: buf, id: null, fileSize: buf.length };
    throw corrupt('no snapshot trailer and not a whole SQLite file (truncated?)');
  }
  throw corrupt('no snapshot trailer and not a SQLite file');
}

/** Reads only the id from a snapshot's trailer (no image checksum): used to recognise a journal's base. */
export function snapshotId(fs: DurableFs, path: string): string | null {
  try {
    return readSnapshot(fs, path).id;
  } catch {
    return null;
  }
}

/**
 * Journal payload versions. 1: UTF-8 JSON `[[sql | sqlIndex, params?], ...]` (still read, and still appended to
 * a v1 journal that is continued after an upgrade). 2 (new journals): the same statements in binary — see
 * `encodeRecordV2` — half the framing bytes per entry.
 */
export type JournalVersion = 1 | 2;
export const JOURNAL_VERSION: JournalVersion = 2;

export function encodeJournalHeader(baseId: string, version: JournalVersion = JOURNAL_VERSION): Uint8Array {
  const h = new Uint8Array(HEADER);
  const dv = new DataView(h.buffer);
  for (let i = 0; i < 8; i++) h[i] = JNL_MAGIC.charCodeAt(i);
  h.set(unhex(baseId), 8);
  dv.setUint32(16, version, true);
  dv.setUint32(20, crc32(h.subarray(0, 20)), true);
  return h;
}

// Params travel as JSON; blobs and bigints get tagged objects with a key no SQL parameter name can have.
const TAG_BLOB = '\u0000b';
const TAG_INT = '\u0000i';

export function encodeValue(_k: string, v: unknown): unknown {
  if (typeof v === 'bigint') return { [TAG_INT]: v.toString() };
  if (v instanceof Uint8Array) return { [TAG_BLOB]: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
  return v;
}
function decodeValue(_k: string, v: unknown): unknown {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if (typeof o[TAG_BLOB] === 'string') return new Uint8Array(Buffer.from(o[TAG_BLOB] as string, 'base64'));
    if (typeof o[TAG_INT] === 'string') return BigInt(o[TAG_INT] as string);
  }
  return v;
}

export type Entry = [string | number] | [string | number, BindParams];

export interface ParsedJournal {
  baseId: string;
  version: JournalVersion;
  records: Entry[][];
  /** Offset just past the last good record. */
  goodEnd: number;
  size: number;
}

/** Parses a journal; stops at the first short or bad-checksum record (a torn tail) and reports where. */
export function parseJournal(buf: Uint8Array, path: string): ParsedJournal {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (buf.length < HEADER || ascii(buf, 0, 8) !== JNL_MAGIC || dv.getUint32(20, true) !== crc32(buf.subarray(0, 20))) {
    throw new ClawError('sqlite.journal_corrupt', `corrupt journal header in ${path}`);
  }
  const baseId = hex(buf.subarray(8, 16));
  const version = dv.getUint32(16, true);
  if (version !== 1 && version !== 2) throw new ClawError('sqlite.journal_version', `journal ${path} has format version ${version}; this runtime reads 1 and 2`);
  const records: Entry[][] = [];
  // ignoreBOM: each v2 string is decoded on its own, and a decoder that strips a leading U+FEFF replayed the key
  // "\ufeff" as "" and content "\ufeffx" as "x" — a database that differed from the one acknowledged.
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let off = HEADER;
  while (off + 8 <= buf.length) {
    const len = dv.getUint32(off, true);
    if (len === 0 || off + 8 + len > buf.length) break;
    const payload = buf.subarray(off + 8, off + 8 + len);
    if (crc32(payload, crc32(buf.subarray(off, off + 4))) !== dv.getUint32(off + 4, true)) break;
    let rec: Entry[];
    try {
      rec = version === 1 ? (JSON.parse(decoder.decode(payload), decodeValue) as Entry[]) : decodeRecordV2(payload, decoder);
    } catch {
      break;
    }
    records.push(rec);
    off += 8 + len;
  }
  return { baseId, version, records, goodEnd: off, size: buf.length };
}

/** v1 payload: the statements as JSON (blobs and bigints tagged). */
export function encodeRecordV1(entries: Entry[]): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(entries, encodeValue));
}

// ---- v2: binary statements ----
// A record's payload is a sequence of statements, each:
//   ref      varint: even 2·i = the journal's i-th SQL text; 8·n + 1 = a new SQL text of n UTF-8 bytes follows
//            (it becomes the next index)
//   mode     varint: 0 = exec (no params); 1 = positional; 2 = named, then positional
//   named    (mode 2) varint count, then count × (name as a string value, value)
//   values   (modes 1, 2) varint count, then count × value
// A value starts with a varint h; its low 3 bits are the type: 0 null; 1 integer (zigzag varint follows,
// |v| < 2^52); 2 float64 LE (8 bytes follow); 3 string, 4 blob, 5 bigint (decimal) — of h >> 3 bytes.
// Where JSON spends ~40 bytes on quotes, escapes and digits per entry row, this spends one byte per value.
type Utf8Decoder = { decode(b: Uint8Array): string };
const T_NULL = 0, T_INT = 1, T_FLOAT = 2, T_STR = 3, T_BLOB = 4, T_BIGINT = 5;

class Writer {
  buf = new Uint8Array(256);
  len = 0;
  private readonly enc = new TextEncoder();
  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.len));
    this.buf = b;
  }
  varint(v: number): void {
    this.room(8);
    while (v >= 0x80) {
      this.buf[this.len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.len++] = v;
  }
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }
  sized(type: number, b: Uint8Array): void {
    this.varint(b.length * 8 + type);
    this.bytes(b);
  }
  string(type: number, s: string): void {
    // UTF-8 is at most 3 bytes per UTF-16 unit: reserve, encode in place, then write the header before it.
    const max = s.length * 3;
    const head = max * 8 + type < 0x80 ? 1 : max * 8 + type < 0x4000 ? 2 : max * 8 + type < 0x200000 ? 3 : 5;
    this.room(head + max);
    const { written } = this.enc.encodeInto(s, this.buf.subarray(this.len + head));
    const h = written * 8 + type;
    const need = h < 0x80 ? 1 : h < 0x4000 ? 2 : h < 0x200000 ? 3 : h < 0x10000000 ? 4 : 5;
    if (need !== head) this.buf.copyWithin(this.len + need, this.len + head, this.len + head + written);
    this.varint(h);
    this.len += written;
  }
  value(v: unknown): void {
    if (v === null || v === undefined) this.varint(T_NULL);
    else if (typeof v === 'number') {
      if (Number.isInteger(v) && Math.abs(v) < 2 ** 52 && !Object.is(v, -0)) {
        this.varint(T_INT);
        this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
      } else {
        this.varint(T_FLOAT);
        this.room(8);
        new DataView(this.buf.buffer, this.buf.byteOffset + this.len, 8).setFloat64(0, v, true);
        this.len += 8;
      }
    } else if (typeof v === 'string') this.string(T_STR, v);
    else if (v instanceof Uint8Array) this.sized(T_BLOB, v);
    else if (typeof v === 'bigint') this.string(T_BIGINT, v.toString());
    else if (typeof v === 'boolean') this.value(v ? 1 : 0);
    else throw new ClawError('sqlite.params', `cannot journal a parameter of type ${typeof v}`);
  }
}

export function encodeRecordV2(entries: Entry[]): Uint8Array {
  const w = new Writer();
  for (const [ref, params] of entries) {
    if (typeof ref === 'number') w.varint(ref * 2);
    else w.string(1, ref); // 8·n + 1: odd, so never an index
    if (params === undefined) {
      w.varint(0);
      continue;
    }
    const named = params.length > 0 && typeof params[0] === 'object' && params[0] !== null && !(params[0] instanceof Uint8Array) && !Array.isArray(params[0]);
    const positional = named ? params.slice(1) : params;
    if (named) {
      const o = Object.entries(params[0] as Record<string, unknown>);
      w.varint(2);
      w.varint(o.length);
      for (const [k, v] of o) {
        w.value(k);
        w.value(v);
      }
    } else w.varint(1);
    w.varint(positional.length);
    for (const v of positional) w.value(v);
  }
  return w.buf.slice(0, w.len);
}

class Reader {
  off = 0;
  constructor(
    private readonly b: Uint8Array,
    private readonly dec: Utf8Decoder,
  ) {}
  text(n: number): string {
    return this.dec.decode(this.take(n));
  }
  get done(): boolean {
    return this.off >= this.b.length;
  }
  varint(): number {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (this.off >= this.b.length || mul > 2 ** 49) throw new Error('bad varint');
      const x = this.b[this.off++];
      v += (x & 0x7f) * mul;
      if (x < 0x80) return v;
      mul *= 0x80;
    }
  }
  take(n: number): Uint8Array {
    if (this.off + n > this.b.length) throw new Error('short value');
    const out = this.b.subarray(this.off, this.off + n);
    this.off += n;
    return out;
  }
  value(): unknown {
    const h = this.varint();
    const type = h % 8;
    const n = Math.floor(h / 8);
    switch (type) {
      case T_NULL:
        return null;
      case T_INT: {
        const z = this.varint();
        return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      }
      case T_FLOAT: {
        const b = this.take(8);
        return new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true);
      }
      case T_STR:
        return this.dec.decode(this.take(n));
      case T_BLOB:
        return this.take(n).slice();
      case T_BIGINT:
        return BigInt(this.dec.decode(this.take(n)));
      default:
        throw new Error(`bad value type ${type}`);
    }
  }
}

export function decodeRecordV2(payload: Uint8Array, dec: Utf8Decoder): Entry[] {
  const r = new Reader(payload, dec);
  const out: Entry[] = [];
  while (!r.done) {
    const h = r.varint();
    // The SQL ref: an even number is an index; an odd one is a string header (len << 3 | 1), whose text follows.
    if (h % 8 !== 1 && h % 2 === 1) throw new Error('bad SQL ref');
    const ref: string | number = h % 2 === 0 ? h / 2 : r.text(Math.floor(h / 8));
    const mode = r.varint();
    if (mode === 0) {
      out.push([ref]);
      continue;
    }
    if (mode !== 1 && mode !== 2) throw new Error(`bad params mode ${mode}`);
    const params: unknown[] = [];
    if (mode === 2) {
      const named: Record<string, unknown> = {};
      for (let n = r.varint(); n > 0; n--) {
        const k = r.value();
        if (typeof k !== 'string') throw new Error('bad parameter name');
        named[k] = r.value();
      }
      params.push(named);
    }
    for (let n = r.varint(); n > 0; n--) params.push(r.value());
    out.push([ref, params as BindParams]);
  }
  return out;
}
