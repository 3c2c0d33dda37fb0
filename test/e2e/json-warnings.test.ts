// stderr carries JSON log lines only, Node's own process warnings included (src/node/json-warnings.ts). A preload
// (`NODE_OPTIONS=--require=...`) emits warnings from inside the running runtime: one by process.emitWarning, one
// by Node itself (`new Buffer()` under --pending-deprecation, DEP0005).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initialize, stderrRecords, withClaw } from './helpers/e2e-util.ts';

const dir = mkdtempSync(join(tmpdir(), 'claw-warnings-'));
const preload = join(dir, 'warn.cjs');
// Waits (bounded) until the runtime has set up its warning handling (Node's printer, named onWarning, is gone),
// so that the warnings come from a running runtime, then emits them and says so on a marker.
writeFileSync(
  preload,
  `const t0 = Date.now();
const t = setInterval(() => {
  if (process.listeners('warning').some((f) => f.name === 'onWarning') && Date.now() - t0 < 3000) return;
  clearInterval(t);
  process.emitWarning('probe from the preload', 'DeprecationWarning', 'DEP0999');
  new Buffer(1);
}, 10);
t.unref();
`,
);

test.after(() => rmSync(dir, { recursive: true, force: true }));

async function warningsOf(env: Record<string, string>): Promise<any[]> {
  return withClaw(['run'], async (c) => {
    await initialize(c);
    // The preload's interval fires within 3 s whatever happens; the two warnings follow on the next tick.
    const t0 = Date.now();
    while (Date.now() - t0 < 5000 && !c.stderr().includes('DEP0005') && !env.NODE_NO_WARNINGS) await new Promise((r) => setTimeout(r, 50));
    if (env.NODE_NO_WARNINGS) await new Promise((r) => setTimeout(r, 800));
    await c.request('claw.shutdown', {}, 'down');
    await c.end();
    // Every line must parse (stderrRecords fails on the first that does not).
    return stderrRecords(c.stderr()).filter((r) => r.msg === 'process warning');
  }, { env: { ...env } });
}

test('process warnings (emitWarning, a Node deprecation under --pending-deprecation) are JSON log lines on stderr', async () => {
  const w = await warningsOf({ NODE_OPTIONS: `--require=${preload} --pending-deprecation` });
  assert.equal(
    w.map((r) => [r.level, r.name, r.code]),
    [
      ['warn', 'DeprecationWarning', 'DEP0999'],
      ['warn', 'DeprecationWarning', 'DEP0005'],
    ],
  );
  assert.is(w[0].warning, 'probe from the preload');
  assert.type(w[0].pid, 'number');
  assert.is(w[0].stack, undefined);
});

test('--trace-deprecation adds the stack to the JSON line', async () => {
  const w = await warningsOf({ NODE_OPTIONS: `--require=${preload} --pending-deprecation --trace-deprecation` });
  assert.is(w.length, 2);
  assert.ok(String(w[1].stack).includes('warn.cjs'), String(w[1].stack));
});

test('NODE_NO_WARNINGS=1 is honoured: no warning line at all, and stderr stays JSON', async () => {
  const w = await warningsOf({ NODE_OPTIONS: `--require=${preload} --pending-deprecation`, NODE_NO_WARNINGS: '1' });
  assert.equal(w, []);
});

test.run();
