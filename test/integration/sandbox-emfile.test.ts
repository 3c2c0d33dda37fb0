// Out of file descriptors (a board's low `ulimit -n` / `LimitNOFILE=` under many concurrent tool calls): a run
// that cannot get its pipes fails with a typed error that says so, leaves no run directory behind, and the next
// run, once descriptors are free again, works. Node makes no pipes on EMFILE (child.stdout is undefined), so the
// runner's first use of them used to throw "Cannot read properties of undefined (reading 'on')" past its cleanup.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClawError } from '../../src/protocol/errors.ts';
import { detectHost, type HostCapabilities } from '../../src/sandbox/host.ts';
import { runSandboxed, type RunOptions } from '../../src/sandbox/runner.ts';
import { spawnSandboxed } from '../../src/sandbox/spawn.ts';
import { testHost, without } from '../fixtures/sandbox/helpers.ts';

let host: HostCapabilities;
const tmpRoot = mkdtempSync(join(tmpdir(), 'claw-emfile-'));

test.before(async () => {
  // The plain process group: no cgroup or bubblewrap step that opens files of its own before the spawn.
  host = without(testHost(await detectHost()), 'bwrap', 'cgroup', 'prlimit');
});
test.after(() => rmSync(tmpRoot, { recursive: true, force: true }));

const opts = (): RunOptions => ({ bin: 'sh', argv: ['-c', 'echo ok'], env: { PATH: '/usr/bin:/bin' }, sandbox: { level: 'process' }, host, allowDowngrade: { bubblewrap: 'none' }, tmpRoot, graceMs: 200 });

/** Run `fn` with every free descriptor of this process taken (at most 200,000 tried), then give them back. */
async function withoutDescriptors<T>(fn: () => Promise<T>): Promise<T | 'not exhausted'> {
  const held: number[] = [];
  try {
    for (;;) {
      if (held.length >= 200_000) return 'not exhausted';
      try {
        held.push(openSync('/dev/null', 'r'));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EMFILE') throw e;
        break;
      }
    }
    return await fn();
  } finally {
    for (const fd of held) closeSync(fd);
  }
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'started',
    (e: unknown) => e,
  );

test('runSandboxed with no descriptor left: a sandbox-spawn error naming EMFILE, no run directory left; then it works', async () => {
  assert.is((await runSandboxed(opts())).stdout, 'ok\n'); // the root is swept and a run directory exists to reuse
  const before = readdirSync(tmpRoot);
  const e = await withoutDescriptors(() => outcome(runSandboxed(opts())));
  if (e === 'not exhausted') return console.log('  (skipped: the descriptor limit is above 200,000)');
  assert.instance(e, ClawError, String(e));
  assert.is((e as ClawError).code, 'sandbox-spawn');
  assert.match((e as Error).message, /could not start sh: .*EMFILE.*too many open files/);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(readdirSync(tmpRoot).filter((d) => !before.includes(d)), [], 'no run directory left behind');
  assert.is((await runSandboxed(opts())).stdout, 'ok\n');
});

test('spawnSandboxed (a stdio MCP server) with no descriptor left: the same typed error', async () => {
  const e = await withoutDescriptors(() => outcome(spawnSandboxed({ ...opts(), bin: 'cat', argv: [] })));
  if (e === 'not exhausted') return;
  assert.instance(e, ClawError, String(e));
  assert.match((e as Error).message, /could not start cat: .*EMFILE/);
  const p = await spawnSandboxed({ ...opts(), bin: 'cat', argv: [] });
  await p.kill();
});

test.run();
