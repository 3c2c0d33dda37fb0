// writeAtomic / writeAtomicAsync (src/transports/fs/layout.ts) on a nearly full filesystem: write(2) may take
// part of a buffer and return its count without an error. The file must then not be published (a request or
// answer cut short, renamed into place, reads as complete), and no temporary file may stay behind (each holds
// space and an inode; a presence file is written every interval). A real small tmpfs (root only).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { writeAtomic, writeAtomicAsync } from '../../src/transports/fs/layout.ts';

const canMount = process.platform === 'linux' && process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0;

/** A 256 KiB tmpfs with about `free` bytes left; undefined where mounting is not allowed. */
function nearlyFull(free: number): string | undefined {
  const dir = mkdtempSync(`${tmpdir()}/claw-fs-atomic-`);
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir]).status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  try {
    writeFileSync(`${dir}/filler`, Buffer.alloc(1024 * 1024));
  } catch {
    // ENOSPC: the filler took everything
  }
  // Give back all but about `free` bytes (the directories hold a few pages of the 256 KiB).
  spawnSync('truncate', ['-s', String(256 * 1024 - free - 16 * 1024), `${dir}/filler`]);
  return dir;
}

const unmount = (dir: string) => {
  spawnSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
};

for (const [label, write] of [
  ['writeAtomic', (d: string, t: string) => writeAtomic(d, 'r1.json', t, false)],
  ['writeAtomicAsync (fsync)', (d: string, t: string) => writeAtomicAsync(d, 'r1.json', t, true)],
] as const) {
  (canMount ? test : test.skip)(`${label}: a text larger than the space left is refused whole, and leaves no temporary file`, async () => {
    const dir = nearlyFull(8 * 1024);
    if (!dir) return;
    try {
      let err: unknown;
      try {
        await write(dir, 'x'.repeat(64 * 1024));
      } catch (e) {
        err = e;
      }
      assert.ok(err, 'the write fails');
      assert.equal(readdirSync(dir).sort(), ['filler'], `nothing published, no .tmp left: ${readdirSync(dir)}`);
      // And a text that fits is written whole.
      await write(dir, '{"ok":true}');
      assert.equal(readdirSync(dir).sort(), ['filler', 'r1.json']);
    } finally {
      unmount(dir);
    }
  });
}

test.run();
