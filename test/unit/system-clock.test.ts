// src/node/clock.ts: the system clock's intervals are armed from the next check phase (so the first timer's
// set-up cost does not sit before a reply), tick every interval after that, and cancel() at any point stops them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { systemClock } from '../../src/node/clock.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('an interval ticks repeatedly once armed', async () => {
  let n = 0;
  const h = systemClock.setInterval(() => n++, 10);
  // Other suites in this process may keep the loop busy: wait for three ticks (at most 3 s), not a fixed time.
  const until = Date.now() + 3000;
  while (n < 3 && Date.now() < until) await sleep(10);
  h.cancel();
  const seen = n;
  assert.ok(seen >= 3, `ticked ${seen} times`);
  await sleep(40);
  assert.is(n, seen, 'no tick after cancel()');
});

test('cancel() before the interval is armed: it never ticks', async () => {
  let n = 0;
  const h = systemClock.setInterval(() => n++, 5);
  h.cancel(); // same turn: the setImmediate that would arm it has not run
  await sleep(40);
  assert.is(n, 0);
});

test('the interval does not keep the process alive (unref), armed or not', async () => {
  const { spawnSync } = await import('node:child_process');
  const { join } = await import('node:path');
  // The test itself runs compiled from .build; the child gets the TypeScript source bundled (tests run from the root).
  const src = join(process.cwd(), 'src/node/clock.ts');
  const { build } = await import('esbuild');
  const r = await build({ stdin: { contents: `import { systemClock } from ${JSON.stringify(src)}; systemClock.setInterval(() => {}, 1000);`, resolveDir: '.', loader: 'ts' }, bundle: true, write: false, format: 'esm', platform: 'node', logLevel: 'error' });
  const t = Date.now();
  const c = spawnSync(process.execPath, ['--input-type=module', '-e', r.outputFiles[0].text], { timeout: 5000 });
  assert.is(c.status, 0);
  assert.ok(Date.now() - t < 900, 'exited before the first tick');
});

test.run();
