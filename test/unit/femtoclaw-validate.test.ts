// validateOutput (src/femtoclaw/validate.ts): one row per rule of FemtoClaw §4–§10 and the project's own,
// each checked for the exact verdict (step, reason, and where it applies field/tool/issues), that
// no argument check ran before step 5, and that nothing executed. The same table runs in worker
// threads to show the verdict is a function of the input only.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { validateOutput, type CapabilityRegistry } from '../../src/femtoclaw/validate.ts';
import { compileArgumentSchema, type ArgumentCheck } from '../../src/tools/json-schema.ts';
import type { Verdict } from '../../src/femtoclaw/verdict.ts';
import { ROWS, SCHEMAS, msg, tc, type Row } from './femtoclaw-rows.ts';

/** A registry whose checks count their calls, and an "executor" that runs only accepted tool calls. */
function harness() {
  const checks = { n: 0 };
  const reg = new Map<string, ArgumentCheck>();
  for (const [name, s] of Object.entries(SCHEMAS)) {
    const c = compileArgumentSchema(s);
    reg.set(name, (a) => {
      checks.n++;
      return c(a);
    });
  }
  return { reg: reg as CapabilityRegistry, checks };
}

const input = (raw: Row[1]) => (typeof raw === 'string' ? raw : new Uint8Array(raw));
const runRow = (r: Row, reg: CapabilityRegistry) => validateOutput(input(r[1]), reg, r[3] ?? {});

if (!isMainThread) {
  const { reg } = harness();
  parentPort!.postMessage(ROWS.map((r) => JSON.stringify(runRow(r, reg))));
} else {
  test(`table has at least 40 rows (${ROWS.length}) and every reason code of verdict.ts but the rare parse ones`, () => {
    assert.ok(ROWS.length >= 40);
    const reasons = new Set(ROWS.map((r) => ('reason' in r[2] ? r[2].reason : 'valid')));
    for (const r of ['not_object', 'no_form', 'both_forms', 'unknown_field', 'form_not_object', 'missing_field', 'wrong_type', 'empty_content', 'invalid_tool_name', 'unknown_tool', 'args_schema', 'code_fence', 'text_around_json', 'trailing_data'])
      assert.ok(reasons.has(r), r);
  });

  for (const row of ROWS) {
    test(`verdict: ${row[0]}`, () => {
      const { reg, checks } = harness();
      const v = runRow(row, reg);
      const e = row[2];
      let executed = 0;
      if (v.valid && v.form === 'tool_call') executed++; // what the agent loop would hand to the gates
      if ('valid' in e) {
        assert.ok(v.valid, JSON.stringify(v));
        assert.is(v.form, e.form);
        if (e.tool !== undefined) assert.is((v as any).tool, e.tool);
        if (e.content !== undefined) assert.is((v as any).content, e.content);
        assert.is(checks.n, e.form === 'tool_call' ? 1 : 0);
        assert.is(executed, e.form === 'tool_call' ? 1 : 0);
        return;
      }
      assert.not.ok(v.valid, JSON.stringify(v));
      const r = v as Extract<Verdict, { valid: false }>;
      assert.equal([r.step, r.reason], [e.step, e.reason]);
      if (e.field !== undefined) assert.is(r.field, e.field);
      if (e.tool !== undefined) assert.is(r.tool, e.tool);
      if (e.paths) assert.equal(r.issues!.map((i) => `${i.keyword}:${i.path}`), e.paths);
      // Steps 1–4 stop before any argument check; step 5 runs exactly one.
      assert.is(checks.n, e.step === 'arguments' ? 1 : 0);
      assert.is(executed, 0);
      assert.type(r.detail, 'string');
    });
  }

  test('the detail never carries argument or content values', () => {
    const { reg } = harness();
    const secret = 'sk-live-0123456789abcdef';
    const outs = [tc('echo', { text: secret + secret }), tc('Echo', { text: secret }), msg(secret).replace('}}', ',"x":1}}'), `${secret} {}`];
    for (const o of outs) {
      const v = validateOutput(o, reg);
      assert.not.ok(v.valid);
      assert.not.ok(JSON.stringify(v).includes(secret), JSON.stringify(v));
    }
  });

  test('determinism: the same output gives the same verdict, in this thread, interleaved, and in 2 worker threads', async () => {
    const { reg } = harness();
    const expected = ROWS.map((r) => JSON.stringify(runRow(r, reg)));
    // Interleaved async callers sharing one registry.
    const interleaved = await Promise.all(
      Array.from({ length: 8 }, (_, k) =>
        Promise.resolve().then(async () => {
          const out: string[] = [];
          for (let i = 0; i < ROWS.length; i++) {
            const j = (i + k * 7) % ROWS.length;
            out[j] = JSON.stringify(runRow(ROWS[j], reg));
            if (i % 5 === 0) await null;
          }
          return out;
        }),
      ),
    );
    for (const o of interleaved) assert.equal(o, expected);
    const url = new URL(import.meta.url);
    const fromWorkers = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<string[]>((resolve, reject) => {
            const w = new Worker(url);
            w.once('message', (m) => {
              resolve(m);
              void w.terminate();
            });
            w.once('error', reject);
          }),
      ),
    );
    for (const o of fromWorkers) assert.equal(o, expected);
  });

  test.run();
}
