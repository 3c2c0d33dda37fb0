// src/log/iso-time.ts: the same text as Date#toISOString for every ms it handles itself, and for the rest.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isoUtc } from '../../src/log/iso-time.ts';

test('equal to toISOString: edges, leap days, century rules, and 200,000 random instants', () => {
  const edges = [0, -1, 1, 951_782_400_000, 951_868_799_999, 4_107_542_399_999, -62_167_219_200_000, 253_402_300_799_999, -62_135_596_800_001, 1_700_000_000_123, Date.UTC(2100, 1, 28, 23, 59, 59, 999), Date.UTC(2000, 1, 29, 12), Date.UTC(1900, 2, 1)];
  for (const ms of edges) assert.is(isoUtc(ms), new Date(ms).toISOString(), String(ms));
  let seed = 7;
  const rnd = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < 200_000; i++) {
    const ms = Math.floor(-62_167_219_200_000 + rnd() * (253_402_300_799_999 + 62_167_219_200_000));
    assert.is(isoUtc(ms), new Date(ms).toISOString(), String(ms));
  }
});

test('outside four-digit years, and non-integers, it is what Date says', () => {
  for (const ms of [253_402_300_800_000, -62_167_219_200_001, 8.64e15, 1.5]) assert.is(isoUtc(ms), new Date(ms).toISOString());
});

test.run();
