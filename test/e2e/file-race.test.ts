// file-read / file-write against a racer that swaps a directory of the scope for a symlink to the
// outside and back, as fast as it can (spec §5.8: `..` and symlinks cannot leave the filesystem
// scope). Through dist/claw.mjs at level `process` (the builtin runs in a worker under bubblewrap)
// and at level `none` (in-process). Zero calls may succeed outside the writable mount.
//
// Calls per operation: 1,000 at level `none`; at level `process` each call starts a worker (~100-200
// ms on a loaded 2-core board), so the default is lower to keep the file under a minute.
// CLAW_RACE_CALLS=1000 runs the full count at both levels.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agent, manifest, type Agent } from './helpers/l2-agent.ts';

const FULL = Number(process.env.CLAW_RACE_CALLS) || 0;
const CALLS = { none: FULL || 1000, process: FULL || 100 };
const CONCURRENCY = { none: 8, process: 4 };

const tool = (name: string) => `    - inline:
        name: "${name}"
        description: "${name}"
        input_schema: { type: "object" }`;

const sandbox = (level: string) => `      level: "${level}"
      capabilities:
        filesystem:
          mode: "scoped"
          mount_paths:
            - { path: "__DIR__/work", permissions: "rw" }`;

/**
 * The finding's loop, bounded by `timeout` (longer than the calls can take) in case this process dies
 * before it kills the racer.
 */
function startRacer(work: string, target: string, calls: number): ChildProcess {
  const loop = `cd "$1" && while :; do mv d d.real; ln -s "$2" d; rm d; mv d.real d; done`;
  const seconds = String(Math.max(120, calls));
  return spawn('timeout', [seconds, 'sh', '-c', loop, 'racer', work, target], { stdio: 'ignore', detached: true });
}

async function stopRacer(racer: ChildProcess, work: string): Promise<void> {
  const gone = new Promise((r) => racer.once('exit', r));
  if (racer.exitCode === null) process.kill(-racer.pid!, 'SIGKILL');
  await gone;
  // Put d back, whichever step the racer was killed at. (A create_dirs write may have made a new d
  // while the old one was d.real; the racer then nests one in the other: files are found by walking.)
  const d = join(work, 'd');
  const st = lstatSync(d, { throwIfNoEntry: false });
  if (st?.isSymbolicLink()) unlinkSync(d);
  if (!st || st.isSymbolicLink()) renameSync(join(work, 'd.real'), d);
}

/** Every path under `dir`, relative to it, symlinks not followed. */
function walk(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const rel = `${prefix}${name}`;
    out.push(rel);
    if (lstatSync(join(dir, name)).isDirectory()) out.push(...walk(join(dir, name), `${rel}/`));
  }
  return out;
}

async function race(a: Agent, level: 'none' | 'process', n: number, one: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await one(next++);
  };
  await Promise.all(Array.from({ length: CONCURRENCY[level] }, worker));
}

async function raceAt(level: 'none' | 'process') {
  const a = await agent(manifest({ tools: [tool('file-read'), tool('file-write')].join('\n'), sandbox: sandbox(level) }), '', (dir) => {
    const p = join(dir, 'claw.yaml');
    writeFileSync(p, readFileSync(p, 'utf8').replaceAll('__DIR__', dir));
    mkdirSync(join(dir, 'work/d'), { recursive: true });
    mkdirSync(join(dir, 'outside'));
    writeFileSync(join(dir, 'work/d/passwd'), 'inside');
  });
  const work = join(a.dir, 'work');
  const outside = join(a.dir, 'outside');
  const n = CALLS[level];
  const reads = { inside: 0, outside: 0, refused: 0, failed: 0 };
  const writes = { inside: 0, outside: 0, refused: 0, failed: 0 };
  try {
    // Reads: the racer's link leads to /etc, so a read that escapes returns the real /etc/passwd.
    let racer = startRacer(work, '/etc', n);
    try {
      await race(a, level, n, async (i) => {
        const r = await a.call('file-read', { path: `${work}/d/passwd` }, `r-${i}`);
        const text = JSON.stringify(r);
        if (r.error?.code === -32010) reads.refused++;
        else if (r.result?.isError) reads.failed++;
        else if (text.includes('root:x:0')) reads.outside++;
        else if (r.result?.content?.[0]?.text === 'inside') reads.inside++;
        else assert.unreachable(`unexpected reply: ${text.slice(0, 300)}`);
      });
    } finally {
      await stopRacer(racer, work);
    }
    // Writes: the link leads to a scratch dir next to the mount (never /etc: an escaping write must
    // not touch the host). Create, truncate, append and create_dirs, each with its own name.
    racer = startRacer(work, outside, n);
    const landed: string[] = [];
    try {
      await race(a, level, n, async (i) => {
        const kind = i % 3;
        const rel = kind === 2 ? `n-${i}/w` : `w-${i}`;
        const r = await a.call('file-write', { path: `${work}/d/${rel}`, content: `${i}`, append: kind === 1, create_dirs: kind === 2 }, `w-${i}`);
        if (r.error?.code === -32010) writes.refused++;
        else if (r.result?.isError) writes.failed++;
        else if (r.result?.content?.[0]?.text?.startsWith('wrote ')) landed.push(rel);
        else assert.unreachable(`unexpected reply: ${JSON.stringify(r).slice(0, 300)}`);
      });
    } finally {
      await stopRacer(racer, work);
    }
    const insideFiles = walk(work);
    for (const rel of landed) {
      if (insideFiles.some((p) => p === `d/${rel}` || p.endsWith(`/${rel}`))) writes.inside++;
      else writes.outside++;
    }
    const strays = walk(outside);
    writes.outside = Math.max(writes.outside, strays.length);
    console.log(`  level ${level}: ${n} reads ${JSON.stringify(reads)}, ${n} writes ${JSON.stringify(writes)}, outside dir: ${strays.length} entries`);
    assert.is(reads.outside, 0, `reads that returned /etc/passwd at level ${level}`);
    assert.is(writes.outside, 0, `writes that landed outside at level ${level}: ${strays.slice(0, 5).join(', ')}`);
    assert.ok(reads.inside > 0 && writes.inside > 0, 'the race left room for calls that succeed inside');
  } finally {
    await a.close();
    rmSync(a.dir, { recursive: true, force: true });
  }
}

test('a racer swapping a directory for a symlink to the outside: nothing is read or written outside (level none)', async () => {
  await raceAt('none');
});

test('… and at level process (the builtin in a bubblewrap worker)', async () => {
  await raceAt('process');
});

test.run();
