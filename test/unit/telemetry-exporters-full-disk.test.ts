// The file and sqlite telemetry exporters on a full or missing disk (src/telemetry/exporters/): a failed open or
// mkdir is not kept (the next batch tries again, so export resumes once the disk is back), and a batch only
// partly appended is cut off again (every line of the JSONL file stays JSON). The last test uses a real small
// tmpfs (root only).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileExporter } from '../../src/telemetry/exporters/file.ts';
import { sqliteExporter } from '../../src/telemetry/exporters/sqlite.ts';
import { openDatabase } from '../../src/memory/sqlite/open.ts';

const event = (n: number, pad = 0) => ({ timestamp: '2026-01-01T00:00:00.000Z', category: 'tool', event: `e${n}`, agent: 'a', data: { n, pad: 'x'.repeat(pad) } }) as any;
const lines = (p: string) => readFileSync(p, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

test('file: a directory that cannot be made is tried again by the next batch', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-tel-'));
  try {
    writeFileSync(join(dir, 'tel'), ''); // a file where the directory should be
    const x = fileExporter(join(dir, 'tel', 't.jsonl'));
    await x.export([event(1)]).then(() => assert.unreachable('mkdir must fail'), () => {});
    rmSync(join(dir, 'tel'));
    await x.export([event(2)]);
    assert.equal(lines(join(dir, 'tel', 't.jsonl')).map((e) => e.event), ['e2']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sqlite: an open that fails is tried again by the next batch', async () => {
  const db = await openDatabase({ path: ':memory:', adapter: 'sqljs' });
  let tries = 0;
  const x = sqliteExporter('<mem>', async () => {
    if (++tries === 1) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    return db;
  });
  await x.export([event(1)]).then(() => assert.unreachable('the open must fail'), () => {});
  await x.export([event(2)]);
  assert.is(tries, 2);
  assert.is(Number((db.prepare('SELECT count(*) AS n FROM claw_telemetry').get() as any).n), 1);
  await x.close!();
});

const canMount = process.platform === 'linux' && process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0;
(canMount ? test : test.skip)('file: a batch cut short by a full disk leaves no torn line; export resumes when space is back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'claw-tel-full-'));
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir]).status !== 0) return rmSync(dir, { recursive: true, force: true });
  try {
    const file = join(dir, 't.jsonl');
    const x = fileExporter(file);
    await x.export([event(1)]);
    try {
      writeFileSync(join(dir, 'filler'), Buffer.alloc(1024 * 1024));
    } catch {
      // ENOSPC: full
    }
    spawnSync('truncate', ['-s', String(200 * 1024), join(dir, 'filler')]);
    await x.export([event(2, 20_000), event(3, 60_000)]).then(() => assert.unreachable('the batch does not fit'), () => {});
    assert.equal(lines(file).map((e) => e.event), ['e1'], 'the partial batch was cut off');
    rmSync(join(dir, 'filler'));
    await x.export([event(4)]);
    assert.equal(lines(file).map((e) => e.event), ['e1', 'e4'], 'every line parses');
  } finally {
    spawnSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
