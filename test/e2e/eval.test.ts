// `claw eval` end to end: dist/claw.mjs runs the shipped home scenarios (examples/eval) against the
// simulated small model (test/helpers/sim-llm-server.ts), once per output mode, and the figures are the
// ones the modes are for: a plain-text answer costs 1 call in native mode, a fenced answer no extra call
// in json_schema mode, every quirk one correction in prompt mode. The same table is in BENCH.md.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runClaw } from './helpers/claw-process.ts';
import { startSimLlm, type Intent, type SimLlm } from '../helpers/sim-llm-server.ts';

const EXAMPLE = join(ROOT, 'examples', 'eval');

/** The simulated model's behaviour for the shipped scenarios: one quirk each (see the helper's table). */
const INTENTS: Intent[] = [
  { when: 'kitchen light', tool: 'mqtt-publish', args: { topic: 'home/kitchen/light/set', payload: 'ON' }, reply: 'The kitchen light is on.', quirk: 'fence' },
  { when: 'bedroom light', tool: 'mqtt-publish', args: { topic: 'home/bedroom/light/set', payload: 'OFF' }, reply: 'The bedroom light is off.', quirk: 'tool_case' },
  { when: 'buy milk', tool: 'note-write', args: { path: 'notes/shopping.txt', content: 'buy milk' }, reply: 'Noted.', quirk: 'args_string' },
  { when: 'living room', tool: 'sensor-read', args: { sensor: 'living-room/temperature' }, reply: 'It is 21.5 °C.', quirk: 'truncated' },
  { when: 'who are you', reply: 'Hello! I am your home assistant.', quirk: 'plain_text' },
  { when: '12 times 12', reply: '12 × 12 = 144.', quirk: 'think' },
  { when: 'front door', tool: 'door-unlock', args: {}, reply: 'Unlocked.', replyOnError: 'I am not allowed to unlock the door.', quirk: 'two_calls' },
];

let sim: SimLlm;
const dirs: string[] = [];
test.before(async () => {
  sim = await startSimLlm({ models: ['qwen2.5:1.5b'], intents: INTENTS });
});
test.after(async () => {
  await sim.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function runEval(extra: string[], timeoutMs = 60_000, command = ['eval', 'claw.yaml', 'home-scenarios.yaml'], edit?: (manifest: string) => string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'claw-eval-e2e-'));
  dirs.push(dir);
  cpSync(EXAMPLE, dir, { recursive: true });
  if (edit) writeFileSync(join(dir, 'claw.yaml'), edit(readFileSync(join(dir, 'claw.yaml'), 'utf8')));
  return runClaw([...command, ...extra], { cwd: dir, env: { HOME: dir }, killAfterMs: timeoutMs });
}

/** [scenario, ok, calls, corrections] rows, and the totals. */
async function figures(mode: string, o: { tools?: boolean } = {}) {
  sim.options.tools = o.tools ?? true;
  const r = await runEval(['--json', '--endpoint', `${sim.url}/v1`, '--mode', mode]);
  assert.is(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  if (process.env.CLAW_EVAL_PRINT) {
    const { evalTable } = await import('../../src/agent/eval.ts');
    process.stderr.write(`\n${mode}${o.tools === false ? ' (server without tool calling)' : ''}\n${evalTable(j.scenarios, j.total)}`);
  }
  return { rows: j.scenarios.map((s: any) => [s.name, s.ok, s.modelCalls, s.corrections]), total: j.total, stderr: r.stderr, json: j };
}

test('native mode: plain text and <think> cost 1 call; each other quirk one correction; all scenarios pass', async () => {
  const f = await figures('native');
  assert.equal(f.rows, [
    ['light-on', true, 3, 1],
    ['light-off', true, 3, 1],
    ['remember-note', true, 3, 1],
    ['read-sensor', true, 3, 1],
    ['greeting', true, 1, 0],
    ['no-tool-needed', true, 1, 0],
    ['refused-door', true, 3, 1],
  ]);
  assert.equal([f.total.passed, f.total.modelCalls, f.total.corrections], [7, 17, 5]);
  assert.ok(f.json.scenarios.every((s: any) => s.mode === 'native' && s.tokensIn > 0));
});

test('json_schema mode: fences, wrong case, string arguments and double calls cost nothing extra; a cut answer still does', async () => {
  const f = await figures('json_schema');
  assert.equal(f.rows, [
    ['light-on', true, 2, 0],
    ['light-off', true, 2, 0],
    ['remember-note', true, 2, 0],
    ['read-sensor', true, 3, 1],
    ['greeting', true, 1, 0],
    ['no-tool-needed', true, 1, 0],
    ['refused-door', true, 2, 0],
  ]);
  assert.equal([f.total.passed, f.total.modelCalls, f.total.corrections], [7, 13, 1]);
});

test('prompt mode: every quirk costs one correction (the model sees its mistake and fixes it)', async () => {
  const f = await figures('prompt');
  assert.equal(f.rows, [
    ['light-on', true, 3, 1],
    ['light-off', true, 3, 1],
    ['remember-note', true, 3, 1],
    ['read-sensor', true, 3, 1],
    ['greeting', true, 2, 1],
    ['no-tool-needed', true, 2, 1],
    ['refused-door', true, 3, 1],
  ]);
  assert.equal([f.total.passed, f.total.modelCalls, f.total.corrections], [7, 19, 7]);
});

test('auto against a server without tool calling: the refusal is said once, json_schema is used from then on', async () => {
  const before = sim.requests.length;
  const f = await figures('auto', { tools: false });
  assert.equal(f.total.modelCalls, 13);
  assert.ok(f.json.scenarios.every((s: any) => s.mode === 'json_schema'));
  assert.is(f.stderr, 'note: provider local-llm refused native tool calling (HTTP 400: registry.ollama.ai/library/qwen2.5:1.5b does not support tools); using json_schema mode for this session\n');
  // One refused request in the whole session, then the remembered mode.
  assert.is(sim.requests.slice(before).filter((q) => q.body?.tools).length, 1);
});

test('the table: one row per scenario and a total row', async () => {
  sim.options.tools = true;
  const r = await runEval(['--endpoint', `${sim.url}/v1`, '--mode', 'native']);
  assert.is(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.is(lines[0], 'claw eval: local-llm (openai-compatible, model qwen2.5:1.5b), 7 scenarios');
  assert.match(lines[2]!, /^scenario\s+ok\s+calls\s+corr\s+tok in\s+tok out\s+ms\s+mode\s+why$/);
  assert.match(r.stdout, /\ngreeting\s+yes\s+1\s+0\s/);
  assert.match(r.stdout, /\ntotal 7\/7 \(100%\)\s+17\s+5\s/);
});

test('claw doctor <manifest>: a model that is not pulled makes exit 1 and says what to run; --probe explains the modes', async () => {
  sim.options.tools = true;
  const at = (model: string) => (m: string) => m.replace('http://127.0.0.1:11434/v1', `${sim.url}/v1`).replace('model: "qwen2.5:1.5b"', `model: "${model}"`);
  const missing = await runEval([], 60_000, ['doctor', 'claw.yaml'], at('llama3.2:1b'));
  assert.is(missing.code, 1, missing.stderr);
  assert.ok(missing.stdout.includes(`local-llm (primary): openai-compatible ${sim.url}/v1 model llama3.2:1b — NOT usable`), missing.stdout);
  assert.ok(missing.stdout.includes('— run: ollama pull llama3.2:1b'), missing.stdout);
  const ok = await runEval(['--probe', '--json'], 60_000, ['doctor', 'claw.yaml'], at('qwen2.5:1.5b'));
  assert.is(ok.code, 0, ok.stderr);
  const [p] = JSON.parse(ok.stdout).providers;
  assert.equal(p.checks.map((c: any) => `${c.check}:${c.state}`), ['reachable:ok', 'auth:ok', 'model:ok', 'native_tools:ok', 'structured_output:ok']);
});

test.run();
