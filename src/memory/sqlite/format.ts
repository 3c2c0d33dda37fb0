// On-disk formats of the durable sql.js store (layout and reasoning in durable.ts and README.md):
// snapshot = SQLite image + 32-byte trailer; journal = 24-byte header + length/CRC-framed JSON records.
import { ClawError } from '../../protocol/errors.ts';
import { crc32 } from './crc32.ts';
import type { BindParams } from './types.ts';
import type { DurableFs } from './durable.ts';

const SNAP_MAGIC = 'CLAWSNP1';
const JNL_MAGIC = 'CLAWJNL1';
export const TRAILER = 32;
export const HEADER = 24;
export const EMPTY_ID = '0000000000000000';
const SQLITE_MAGIC = 'SQLite format 3\0';

const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
export const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
export const unhex = (s: string) => Uint8Array.from(s.match(/../g)!.map((x) => parseInt(x, 16)));

export function encodeSnapshot(image: Uint8Array, id: string): Uint8Array {
  const out = new Uint8Array(image.length + TRAILER);
  out.set(image, 0);
  const t = out.subarray(image.length);
  const dv = new DataView(t.buffer, t.byteOffset, TRAILER);
  for (let i = 0; i < 8; i++) t[i] = SNAP_MAGIC.charCodeAt(i);
  t.set(unhex(id), 8);
  dv.setUint32(16, image.length % 2 ** 32, true);
  dv.setUint32(20, Math.floor(image.length / 2 ** 32), true);
  dv.setUint32(24, crc32(image), true);
  dv.setUint32(28, crc32(t.subarray(0, 28)), true);
  return out;
}

export interface Snapshot {
  image: Uint8Array;
  /** null for a plain SQLite file without our trailer (e.g. written by the native adapter). */
  id: string | null;
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
  if (buf.length >= TRAILER && ascii(buf, buf.length - TRAILER, buf.length - TRAILER + 8) === SNAP_MAGIC) {
    const t = buf.subarray(buf.length - TRAILER);
    const dv = new DataView(t.buffer, t.byteOffset, TRAILER);
    if (dv.getUint32(28, true) !== crc32(t.subarray(0, 28))) throw corrupt('trailer checksum mismatch');
    const len = dv.getUint32(16, true) + dv.getUint32(20, true) * 2 ** 32;
    if (len !== buf.length - TRAILER) throw corrupt(`image length ${buf.length - TRAILER}, trailer says ${len}`);
    const image = buf.subarray(0, len);
    if (dv.getUint32(24, true) !== crc32(image)) throw corrupt('image checksum mismatch');
    return { image, id: hex(t.subarray(8, 16)) };
  }
  if (buf.length === 0) throw corrupt('empty file');
  if (buf.length >= 100 && ascii(buf, 0, 16) === SQLITE_MAGIC) {
    // A plain SQLite file is accepted only when whole: page-aligned, and as long as its header says.
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const pageSize = dv.getUint16(16) === 1 ? 65536 : dv.getUint16(16);
    const pages = dv.getUint32(28);
    const headerSizeValid = pages > 0 && dv.getUint32(92) === dv.getUint32(24);
    if (pageSize >= 512 && buf.length % pageSize === 0 && (!headerSizeValid || pages * pageSize === buf.length)) return { image: buf, id: null };
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

export function encodeJournalHeader(baseId: string): Uint8Array {
  const h = new Uint8Array(HEADER);
  const dv = new DataView(h.buffer);
  for (let i = 0; i < 8; i++) h[i] = JNL_MAGIC.charCodeAt(i);
  h.set(unhex(baseId), 8);
  dv.setUint32(16, 1, true);
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
  const records: Entry[][] = [];
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let off = HEADER;
  while (off + 8 <= buf.length) {
    const len = dv.getUint32(off, true);
    if (len === 0 || off + 8 + len > buf.length) break;
    const payload = buf.subarray(off + 8, off + 8 + len);
    if (crc32(payload, crc32(buf.subarray(off, off + 4))) !== dv.getUint32(off + 4, true)) break;
    let rec: Entry[];
    try {
      rec = JSON.parse(decoder.decode(payload), decodeValue) as Entry[];
    } catch {
      break;
    }
    records.push(rec);
    off += 8 + len;
  }
  return { baseId, records, goodEnd: off, size: buf.length };
}
