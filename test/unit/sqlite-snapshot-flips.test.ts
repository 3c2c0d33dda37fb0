// A snapshot with any one byte changed either is refused as corrupt (format.ts readSnapshot: trailer CRC, body
// length, inflate, image length, image CRC) or still reads back the very image that was written: every position of
// a real snapshot, each flipped three ways. The second case is real: in a deflate stream of a highly repetitive
// image (zero pages, repeated text) a changed distance inside a run copies the same bytes, so the image — which is
// what the CRC covers, and all that recovery uses — is unchanged.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDurable } from '../../src/memory/sqlite/durable.ts';
import { readSnapshot } from '../../src/memory/sqlite/format.ts';

const work = fs.mkdtempSync(join(tmpdir(), 'claw-sqlite-flips-'));
test.after(() => fs.rmSync(work, { recursive: true, force: true }));

test('every single-byte change of a snapshot is detected or reads back the same image', async () => {
  const path = join(work, 'memory.db');
  const db = await openDurable(path, { snapshotRatio: 0.1, minJournalBytes: 0, asyncSnapshots: false });
  db.exec('CREATE TABLE e(id INTEGER PRIMARY KEY, body TEXT)');
  for (let i = 0; i < 12; i++) db.prepare('INSERT INTO e(body) VALUES (?)').run(`entry ${i} ${'y'.repeat(600)}`);
  db.durable.snapshot();
  db.close();
  const good = fs.readFileSync(path);
  const nodeFs = { ...fs, readFileSync: () => copy } as unknown as Parameters<typeof readSnapshot>[0];
  let copy = Buffer.from(good);
  const want = Buffer.from(readSnapshot(nodeFs, path).image);
  const wrong: number[] = [];
  let harmless = 0;
  for (const mask of [0xff, 0x01, 0x80]) {
    for (let at = 0; at < good.length; at++) {
      copy = Buffer.from(good);
      copy[at] ^= mask;
      try {
        const read = readSnapshot(nodeFs, path);
        if (Buffer.compare(Buffer.from(read.image), want) === 0) harmless++;
        else wrong.push(at);
      } catch (e) {
        assert.is((e as { code?: string }).code, 'sqlite.snapshot_corrupt', `byte ${at}: ${(e as Error).message}`);
      }
    }
  }
  assert.equal(wrong, [], `${good.length}-byte snapshot: changes at ${wrong.slice(0, 20)} read back as another image`);
  assert.ok(harmless < good.length * 3, 'most changes are detected');
});

test.run();
