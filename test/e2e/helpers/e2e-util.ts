// Shared helpers for the e2e suites: fixtures, stream hygiene checks, reply assertions.
// Every spawned child is killed in a finally block (withClaw), whatever the test outcome.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import * as assert from 'uvu/assert';
import { ROOT, startClaw, initParams, type ClawRun } from './claw-process.ts';

export const FIX = join(ROOT, 'test', 'fixtures', 'e2e');
export const fixture = (...parts: string[]) => join(FIX, ...parts);
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The fixture directory has no claw.runtime.yaml at its top, so `claw run` without a manifest gets defaults. */
export const NEUTRAL_CWD = FIX;

export const VERSIONS = [
  { proto: '0.3.0', dir: 'v030' },
  { proto: '0.2.0', dir: 'v020' },
] as const;

export function loadYaml(path: string): any {
  return parseYaml(readFileSync(path, 'utf8'));
}

/** Parse stderr as JSON lines: every non-empty line must be an object with string `level` and `msg`. */
export function stderrRecords(text: string): any[] {
  const out: any[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let rec: any;
    try {
      rec = JSON.parse(line);
    } catch {
      assert.unreachable(`stderr line is not JSON: ${line.slice(0, 300)}`);
    }
    assert.type(rec, 'object', `stderr line is not an object: ${line.slice(0, 300)}`);
    assert.ok(rec !== null && !Array.isArray(rec), `stderr line is not an object: ${line.slice(0, 300)}`);
    assert.ok(['debug', 'info', 'warn', 'error'].includes(rec.level), `bad level in stderr line: ${line.slice(0, 300)}`);
    assert.type(rec.msg, 'string', `no msg in stderr line: ${line.slice(0, 300)}`);
    assert.ok(rec.msg.length > 0);
    out.push(rec);
  }
  return out;
}

/** [from, to] of every lifecycle.transition log record. */
export function transitions(stderr: string): [string, string][] {
  return stderrRecords(stderr)
    .filter((r) => r.msg === 'lifecycle.transition')
    .map((r) => {
      assert.is(r.event, 'lifecycle.transition');
      return [r.from, r.to] as [string, string];
    });
}

/** stdout carried JSON-RPC 2.0 only, and stderr is JSON lines only. */
export function assertCleanStreams(c: ClawRun): void {
  assert.equal(c.garbage, [], 'stdout must carry protocol messages only');
  for (const m of c.messages) {
    const all = Array.isArray(m) ? m : [m];
    for (const x of all) assert.is(x?.jsonrpc, '2.0', `non JSON-RPC message on stdout: ${JSON.stringify(m).slice(0, 300)}`);
  }
  stderrRecords(c.stderr());
}

function alive(c: ClawRun): boolean {
  return c.child.exitCode === null && c.child.signalCode === null;
}

/** Start `claw <args>`, run `fn`, check stream hygiene, and always kill the child. */
export async function withClaw<T>(args: string[], fn: (c: ClawRun) => Promise<T>, opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<T> {
  const c = startClaw(args, { cwd: NEUTRAL_CWD, ...opts });
  try {
    const r = await fn(c);
    assertCleanStreams(c);
    return r;
  } finally {
    if (alive(c)) c.kill();
  }
}

/** claw.initialize with the TV-L1-04 params (plus overrides); asserts success and returns the result. */
export async function initialize(c: ClawRun, over: Record<string, unknown> = {}): Promise<any> {
  const r = await c.request('claw.initialize', initParams(over));
  assert.ok(r.result, `initialize failed: ${JSON.stringify(r)}`);
  return r.result;
}

/** Assert `reply` is a JSON-RPC error with this id and code (and exactly this data when given). */
export function assertError(reply: any, id: unknown, code: number, data?: unknown): void {
  assert.ok(reply && typeof reply === 'object' && !Array.isArray(reply), `not a single reply: ${JSON.stringify(reply)}`);
  assert.is(reply.jsonrpc, '2.0');
  assert.ok('id' in reply, 'reply has no id member');
  assert.is(reply.id, id, `id: ${JSON.stringify(reply)}`);
  assert.not.ok('result' in reply, `unexpected result: ${JSON.stringify(reply)}`);
  assert.is(reply.error?.code, code, `code: ${JSON.stringify(reply)}`);
  assert.type(reply.error.message, 'string');
  assert.ok(reply.error.message.length > 0);
  if (data !== undefined) assert.equal(reply.error.data, data);
}

/** Assert `reply` is a JSON-RPC success with this id and exactly this result. */
export function assertResult(reply: any, id: unknown, result: unknown): void {
  assert.is(reply?.jsonrpc, '2.0');
  assert.is(reply.id, id);
  assert.not.ok('error' in reply, `unexpected error: ${JSON.stringify(reply)}`);
  assert.equal(reply.result, result);
}

/** Wait until at least `n` stdout messages were received in total. */
export async function waitCount(c: ClawRun, n: number, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (c.messages.length < n) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${n} messages; got ${JSON.stringify(c.messages).slice(0, 800)}; stderr ${c.stderr().slice(-500)}`);
    await sleep(5);
  }
}

/** Wait for the first message at index >= mark that matches `pred`. */
export function waitAfter(c: ClawRun, mark: number, pred: (m: any) => boolean, timeoutMs = 5000): Promise<any> {
  return c.waitFor((m) => c.messages.indexOf(m) >= mark && pred(m), timeoutMs);
}

/**
 * Prove that what was sent since `mark` got no reply: send a claw.status request, wait for its reply
 * and a short quiet period, and check the status reply is the only new message.
 */
export async function assertNoReplySince(c: ClawRun, mark: number, id: string | number = 'probe'): Promise<any> {
  const reply = await c.request('claw.status', undefined, id);
  await sleep(100);
  const fresh = c.messages.slice(mark).filter((m) => m?.method !== 'claw.heartbeat');
  assert.equal(fresh, [reply], `unexpected messages: ${JSON.stringify(fresh).slice(0, 800)}`);
  return reply;
}

export function exitCode(c: ClawRun, timeoutMs = 5000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return Promise.race([
    c.exited,
    sleep(timeoutMs).then(() => {
      throw new Error(`process did not exit within ${timeoutMs} ms; stderr ${c.stderr().slice(-500)}`);
    }),
  ]);
}
