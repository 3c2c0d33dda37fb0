// `claw run --start` waits for space (src/cli/start-when-writable.ts): only a full disk or quota is waited
// for, the wait doubles to its cap and is told once per cap, and a stop ends the wait at once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ErrorCode, ProtocolError } from '../../src/protocol/errors.ts';
import { START_RETRY_FIRST_MS, START_RETRY_MAX_MS, startWhenWritable, waitsForSpace } from '../../src/cli/start-when-writable.ts';

const refusal = (rule_id: string, errno?: string) => new ProtocolError(ErrorCode.PolicyDenied, `Policy denied: ${rule_id}`, { rule_id, action: 'deny', state: 'ERROR', ...(errno ? { errno } : {}) });

function harness() {
  const lines: { level: string; msg: string; fields?: any }[] = [];
  const at = (level: string) => (msg: string, fields?: any) => void lines.push({ level, msg, fields });
  const delays: number[] = [];
  // Timers fire at once (the delay is recorded): the loop's decisions, not the waiting, are under test.
  const clock = { setTimeout: (fn: () => void, ms: number) => (delays.push(ms), queueMicrotask(fn), { cancel() {} }) };
  return { lines, delays, clock, log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

test('which refusals are waited for: audit:write_failed with ENOSPC or EDQUOT only', () => {
  assert.ok(waitsForSpace(refusal('audit:write_failed', 'ENOSPC')));
  assert.ok(waitsForSpace(refusal('audit:write_failed', 'EDQUOT')));
  assert.not.ok(waitsForSpace(refusal('audit:write_failed', 'EROFS')));
  assert.not.ok(waitsForSpace(refusal('audit:write_failed')));
  assert.not.ok(waitsForSpace(refusal('audit:corrupt')));
  assert.not.ok(waitsForSpace(new Error('ENOSPC')));
});

test('full, full, …, then space: started; delays double to the cap; told when the wait begins and at each capped wait', async () => {
  const h = harness();
  let calls = 0;
  const out = await startWhenWritable(async () => {
    if (++calls < 10) throw refusal('audit:write_failed', 'ENOSPC');
  }, new Promise<string>(() => {}), h.log, h.clock);
  assert.is(out, 'started');
  assert.is(calls, 10);
  assert.equal(h.delays, [5000, 10000, 20000, 40000, 80000, 160000, 300000, 300000, 300000]);
  assert.is(h.delays[0], START_RETRY_FIRST_MS);
  const warns = h.lines.filter((l) => l.level === 'warn');
  assert.is(warns.length, 1 + h.delays.filter((d) => d === START_RETRY_MAX_MS).length);
  assert.match(warns[0].fields.error, /audit:write_failed/);
  assert.equal(h.lines.at(-1), { level: 'info', msg: 'session started: the data directory takes writes again', fields: { attempts: 10 } });
});

test('any other failure: not waited for, told as before', async () => {
  const h = harness();
  const out = await startWhenWritable(async () => {
    throw refusal('audit:corrupt');
  }, new Promise<string>(() => {}), h.log, h.clock);
  assert.equal(out, {});
  assert.equal(h.delays, []);
  assert.is(h.lines[0].msg, 'session could not start');
});

test('stopped while waiting (SIGTERM): the wait ends at once with the reason', async () => {
  const h = harness();
  let stop!: (r: string) => void;
  const stopped = new Promise<string>((r) => (stop = r));
  const clock = { setTimeout: () => (stop('SIGTERM'), { cancel() {} }) };
  const out = await startWhenWritable(async () => {
    throw refusal('audit:write_failed', 'ENOSPC');
  }, stopped, h.log, clock);
  assert.equal(out, { stopped: 'SIGTERM' });
  assert.is(h.lines.at(-1)!.msg, 'session could not start');
});

test('a client started the session during the wait: kept, not started twice', async () => {
  const h = harness();
  let calls = 0;
  let clientStarted = false;
  const clock = { setTimeout: (fn: () => void) => ((clientStarted = true), queueMicrotask(fn), { cancel() {} }) };
  const out = await startWhenWritable(async () => {
    calls++;
    throw refusal('audit:write_failed', 'ENOSPC');
  }, new Promise<string>(() => {}), h.log, clock, () => !clientStarted);
  assert.is(out, 'started');
  assert.is(calls, 1);
});

test.run();
