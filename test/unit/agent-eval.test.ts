// `claw eval` scoring (src/agent/eval.ts): reading scenarios, what counts as success, totals and the table.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evalTable, readScenarios, resultOf, score, totalsOf } from '../../src/agent/eval.ts';
import type { TurnResult } from '../../src/agent/types.ts';

const turn = (o: Partial<TurnResult>): TurnResult => ({ reply: 'ok', outcome: 'message', toolCalls: [], rejections: 0, modelCalls: 1, tokens: { input: 10, output: 2 }, ...o });
const step = (tool: string, args: Record<string, unknown>, ok = true) => ({ tool, args, request_id: 'r', ok, ...(ok ? {} : { code: -32011 }) });

test('scenarios: the three expectation shapes; every problem names its place', () => {
  const s = readScenarios({
    scenarios: [
      { name: 'a', message: 'on', expect: { tool: 't', args: { x: 1 } } },
      { message: 'hi', expect: { message: true, contains: 'Hello' } },
      { name: 'c', message: 'door', expect: { refused: 'door' }, approve: true },
    ],
  });
  assert.equal(s, [
    { name: 'a', message: 'on', expect: { tool: 't', args: { x: 1 } } },
    { name: 'scenario-2', message: 'hi', expect: { message: true, contains: 'Hello' } },
    { name: 'c', message: 'door', expect: { refused: 'door' }, approve: true },
  ]);
  assert.throws(() => readScenarios({}), /non-empty `scenarios` list/);
  assert.throws(() => readScenarios({ scenarios: [{ name: 'x', message: '' }] }), /scenarios\[0\] \(x\): `message`/);
  assert.throws(() => readScenarios({ scenarios: [{ message: 'm', expect: { tool: 1 } }] }), /`expect` needs one of/);
});

test('score: tool and argument subset, message without a tool, a refused call followed by a message', () => {
  const tool = { name: 's', message: 'm', expect: { tool: 'mqtt', args: { topic: 'a' } } };
  assert.equal(score(tool, turn({ toolCalls: [step('mqtt', { topic: 'a', payload: 'ON' })] })), { ok: true });
  assert.equal(score(tool, turn({ toolCalls: [step('mqtt', { topic: 'b' })] })), { ok: false, why: 'argument topic was "b", not "a"' });
  assert.equal(score(tool, turn({ toolCalls: [step('note', {})] })), { ok: false, why: 'called note, not mqtt' });
  assert.equal(score(tool, turn({ outcome: 'gave_up', problem: 'the model answered 3× …' })), { ok: false, why: 'no valid output (the model answered 3× …)' });
  const msg = { name: 's', message: 'm', expect: { message: true as const, contains: '144' } };
  assert.equal(score(msg, turn({ reply: '12 × 12 = 144.' })), { ok: true });
  assert.equal(score(msg, turn({ reply: 'many' })), { ok: false, why: 'the reply does not mention "144"' });
  assert.equal(score(msg, turn({ toolCalls: [step('x', {})] })), { ok: false, why: 'called x; a message without a tool was expected' });
  const refused = { name: 's', message: 'm', expect: { refused: 'door' } };
  assert.equal(score(refused, turn({ toolCalls: [step('door', {}, false)] })), { ok: true });
  assert.equal(score(refused, turn({ toolCalls: [step('door', {})] })), { ok: false, why: 'door ran: it was not refused' });
  assert.equal(score(refused, turn({})), { ok: false, why: 'door was not asked for' });
});

test('totals and the table', () => {
  const a = resultOf({ name: 'one', message: 'm', expect: { message: true } }, turn({ modelCalls: 1, mode: 'native' }), 12.4);
  const b = resultOf({ name: 'two', message: 'm', expect: { tool: 't' } }, turn({ modelCalls: 3, rejections: 2, tokens: { input: 30, output: 6 } }), 40);
  const t = totalsOf([a, b]);
  assert.equal(t, { scenarios: 2, passed: 1, successRate: 0.5, modelCalls: 4, corrections: 2, tokensIn: 40, tokensOut: 8, ms: 52, callsPerScenario: 2 });
  const table = evalTable([a, b], t).split('\n');
  assert.match(table[0]!, /^scenario\s+ok\s+calls/);
  assert.match(table[2]!, /^one\s+yes\s+1\s+0\s+10\s+2\s+12\s+native$/);
  assert.match(table[3]!, /^two\s+NO\s+3\s+2\s+30\s+6\s+40\s+-\s+no tool was called$/);
  assert.match(table[5]!, /^total 1\/2 \(50%\)\s+4\s+2\s+40\s+8\s+52$/);
});

test.run();
