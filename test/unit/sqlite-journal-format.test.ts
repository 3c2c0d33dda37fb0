// Journal payload format 2 (src/memory/sqlite/format.ts encodeRecordV2): every value the adapter can bind comes
// back exactly, the bytes are pinned for one record, and a v2 journal's records parse with a torn tail dropped.
// (Format 1 — JSON — is read by memory-schema-migration.test.ts from a journal the old code wrote.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { crc32 } from '../../src/memory/sqlite/crc32.ts';
import { HEADER, decodeRecordV2, encodeJournalHeader, encodeRecordV1, encodeRecordV2, parseJournal, type Entry } from '../../src/memory/sqlite/format.ts';

const dec = new TextDecoder('utf-8', { fatal: true });
const roundTrip = (entries: Entry[]) => decodeRecordV2(encodeRecordV2(entries), dec);

test('values: null, integers (±, up to 2^52), floats, -0, strings (UTF-8, empty, long), blobs, bigints', () => {
  const values = [
    null,
    0,
    1,
    -1,
    63,
    64,
    -65,
    2 ** 31,
    -(2 ** 40),
    2 ** 52 - 1,
    2 ** 52,
    -(2 ** 53),
    Number.MAX_SAFE_INTEGER,
    1.5,
    -0,
    1e300,
    Number.NaN,
    '',
    'a',
    'héllo wörld',
    '𝄞 astral and ☃',
    'x'.repeat(20_000),
    new Uint8Array([0, 1, 255]),
    new Uint8Array(0),
    2n ** 70n,
    -5n,
  ];
  const [[ref, params]] = roundTrip([['INSERT INTO t VALUES (?)', values as never]]);
  assert.is(ref, 'INSERT INTO t VALUES (?)');
  assert.is(params!.length, values.length);
  values.forEach((v, i) => {
    const got = params![i];
    if (v instanceof Uint8Array) assert.equal(Array.from(got as Uint8Array), Array.from(v), `value ${i}`);
    else assert.ok(Object.is(got, v), `value ${i}: ${String(got)} !== ${String(v)}`);
  });
});

test('statements: index refs, exec without params, named + positional params', () => {
  const entries: Entry[] = [['CREATE TABLE t(a)'], [3, [1, 'two']], [0, [{ ':a': 1, $b: 'x', c: null }, 7] as never], [12, []]];
  assert.equal(roundTrip(entries), entries);
});

test('bytes: one row of the entries insert is pinned (format 2 is a file format)', () => {
  const rec = encodeRecordV2([[2, [1, '', null, 'hi', null, 1767225600000]]]);
  // ref 2·2 = 4, mode 1, 6 values: int 1 (zigzag 2), '' (header 3), null (0), 'hi' (2·8+3 = 19), null,
  // int 1767225600000 (zigzag 3534451200000, a 6-byte varint).
  assert.equal(Array.from(rec), [4, 1, 6, 1, 2, 3, 0, 19, 104, 105, 0, 1, 128, 160, 213, 237, 238, 102]);
  // The same statement in format 1 (JSON): 41 bytes for these 18.
  assert.is(encodeRecordV1([[2, [1, '', null, 'hi', null, 1767225600000]]]).length, 41);
});

test('a v2 journal parses record by record; a torn or corrupt tail is dropped, never half-read', () => {
  const records: Entry[][] = [[['INSERT INTO t VALUES (?)', ['one']]], [[0, ['two']], [0, ['three']]]];
  const parts = [encodeJournalHeader('0123456789abcdef')];
  for (const r of records) {
    const p = encodeRecordV2(r);
    const f = new Uint8Array(8 + p.length);
    const dv = new DataView(f.buffer);
    dv.setUint32(0, p.length, true);
    dv.setUint32(4, crc32(p, crc32(f.subarray(0, 4))), true);
    f.set(p, 8);
    parts.push(f);
  }
  const whole = Buffer.concat(parts);
  const j = parseJournal(whole, 'j');
  assert.is(j.version, 2);
  assert.is(j.baseId, '0123456789abcdef');
  assert.equal(j.records, records);
  assert.is(j.goodEnd, whole.length);
  for (let cut = HEADER; cut < whole.length; cut++) {
    const t = parseJournal(whole.subarray(0, cut), 'j');
    const first = HEADER + parts[1].length;
    assert.is(t.records.length, cut < first ? 0 : 1, `cut at ${cut}`);
    assert.is(t.goodEnd, cut < first ? HEADER : first);
  }
  const flipped = Buffer.from(whole);
  flipped[flipped.length - 3] ^= 0x40;
  assert.is(parseJournal(flipped, 'j').records.length, 1, 'a bad checksum ends the journal');
});

test.run();
