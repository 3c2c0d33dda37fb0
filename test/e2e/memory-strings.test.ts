// Strings at the wire and in the memory database (docs/protocol.md "Strings"): a lone UTF-16 surrogate, which
// JSON text can carry as a "\ud800" escape, is refused with -32602 before anything is stored; everything else a
// store acknowledged comes back exactly after a restart. A seeded fuzz over the memory methods (random strings,
// request ids reused across stores and methods, ids of other JSON types, restarts in between) gets no internal
// error (-32603) and no backend error (-32030 / -32031) at all.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import type { ClawRun } from './helpers/claw-process.ts';
import { assertCleanStreams } from './helpers/e2e-util.ts';
import { agentDir, all, query, startAgent, store, type AgentDir } from './memory-agent.ts';
import { seededRandom } from '../helpers/rng.ts';

const STORES = `        - name: "conv"
          type: "conversation"
          backend: "sqlite"
        - name: "kv"
          type: "key-value"
          backend: "sqlite"
        - name: "notes"
          type: "semantic"
          backend: "sqlite"
        - name: "tasks"
          type: "checkpoint"
          backend: "sqlite"`;

const dirs: string[] = [];
const live: ClawRun[] = [];
test.after.each(() => {
  for (const c of live.splice(0)) c.kill();
});
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newAgent(): AgentDir {
  const a = agentDir({ stores: STORES });
  dirs.push(a.dir);
  return a;
}
async function start(a: AgentDir): Promise<ClawRun> {
  const c = await startAgent(a);
  live.push(c);
  return c;
}
/** Close stdin and wait for the exit code; a child still running after 20 s is killed and reported. */
async function endWithin(c: ClawRun): Promise<number | null> {
  const t = setTimeout(() => c.kill(), 20_000);
  const code = await c.end();
  clearTimeout(t);
  assert.ok(code !== null, `the agent did not exit after stdin closed: ${c.stderr().slice(-2000)}`);
  return code;
}
/** A frame as JSON text with the given raw string literal spliced in (JSON.stringify would escape nothing away: the escape must be in the text). */
const lone = (s: string) => `"${s}"`;

test('lone surrogates anywhere in params are refused with -32602 and nothing is stored; a restart opens cleanly', async () => {
  const a = newAgent();
  let c = await start(a);
  const frames: [string, string][] = [
    [`{"store":"conv","entries":[{"content":"A"}],"context":{"request_id":${lone('\\ud800')}}}`, 'context.request_id'],
    [`{"store":"conv","entries":[{"content":"B"}],"context":{"request_id":${lone('\\udc00')}}}`, 'context.request_id'],
    [`{"store":"kv","entries":[{"content":"v","key":${lone('\\ud800')}}],"context":{"request_id":"k1"}}`, 'entries.0.key'],
    [`{"store":"conv","entries":[{"content":${lone('x\\ud800y')}}],"context":{"request_id":"c1"}}`, 'entries.0.content'],
    [`{"store":"conv","entries":[{"content":{${lone('\\udfff')}:1}}],"context":{"request_id":"c2"}}`, 'entries.0.content.\udfff'],
  ];
  let id = 0;
  for (const [params, path] of frames) {
    c.sendRaw(`{"jsonrpc":"2.0","id":${++id},"method":"claw.memory.store","params":${params}}\n`);
    const r = await c.waitFor((m) => m.id === id);
    assert.is(r.error?.code, -32602, JSON.stringify(r));
    assert.equal(r.error.data.issues, [{ path, message: 'lone UTF-16 surrogate' }]);
  }
  c.sendRaw(`{"jsonrpc":"2.0","id":99,"method":"claw.memory.query","params":{"store":"kv","query":{"type":"key","key":${lone('\\ud800')}}}}\n`);
  assert.is((await c.waitFor((m) => m.id === 99)).error?.code, -32602);
  // A valid pair is well-formed: stored and returned as it came.
  const pair = (await store(c, 'conv', [{ content: 'x\ud83d\ude00y' }], '\ud83d\ude00')).result;
  assert.ok(pair, 'a surrogate pair is accepted');
  assert.equal((await all(c, 'conv')).map((e) => e.content), ['x\ud83d\ude00y']);
  assertCleanStreams(c);
  assert.is(await endWithin(c), 0);
  c = await start(a);
  assert.equal((await all(c, 'conv')).map((e) => e.content), ['x\ud83d\ude00y']);
  const retry = await store(c, 'conv', [{ content: 'x\ud83d\ude00y' }], '\ud83d\ude00');
  assert.equal(retry.result, pair, 'a retry after the restart is answered from the first store');
  assert.is((await all(c, 'conv')).length, 1);
  assert.is(await endWithin(c), 0);
});

// ---- fuzz ----

const ALPHABET = ['a', 'b', ' ', '\u0000', '\ufffd', '\uffff', '\ufdd0', '\u{10ffff}', '\u{1f600}', 'é', '"', '\\', '\n', '\u2028'];
const LONE = ['\\ud800', '\\udc00', '\\udbff\\u0041'];

test('seeded fuzz over the memory methods: no internal or backend error, acknowledged data identical after each restart', async () => {
  const r = seededRandom(20261127);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  /** JSON text of a random string; sometimes with a lone surrogate escape in it. */
  const str = (): string => {
    let s = '';
    for (let i = 1 + Math.floor(r() * 4); i > 0; i--) s += pick(ALPHABET);
    const text = JSON.stringify(s);
    return r() < 0.1 ? `${text.slice(0, -1)}${pick(LONE)}"` : text;
  };
  const ids = ['r1', 'r2', '1', '\u0000', '\ufffd', 'R1'];
  /** request_id: mostly from a small pool shared by every store and method; sometimes of another JSON type. */
  const requestId = (): string => (r() < 0.1 ? pick(['1', 'null', 'true', '{"a":1}', '[1]', '1.0']) : r() < 0.7 ? JSON.stringify(pick(ids)) : str());
  const storesOf = ['conv', 'kv', 'notes', 'tasks', 'missing'];
  const entry = (s: string) => {
    const key = s === 'kv' || s === 'tasks' || r() < 0.2 ? `,"key":${str()}` : '';
    const content = r() < 0.2 ? `{${str()}:${str()}}` : str();
    const meta = r() < 0.3 ? `,"metadata":{${str()}:${str()}}` : '';
    return `{"content":${content}${key}${meta}}`;
  };
  const frame = (id: number): string => {
    const s = pick(storesOf);
    const m = r();
    if (m < 0.55) {
      const entries = Array.from({ length: 1 + Math.floor(r() * 3) }, () => entry(s)).join(',');
      return `{"jsonrpc":"2.0","id":${id},"method":"claw.memory.store","params":{"store":"${s}","entries":[${entries}],"context":{"request_id":${requestId()}}}}`;
    }
    if (m < 0.9) {
      const q = pick([`{"type":"key","key":${str()}}`, `{"type":"semantic","text":${str()}}`, `{"type":"time-range","time_range":{}}`, `{"type":"key","key":${str()},"top_k":${pick(['1', '0', '1e9', '"x"'])}}`]);
      return `{"jsonrpc":"2.0","id":${id},"method":"claw.memory.query","params":{"store":"${s}","query":${q}}}`;
    }
    return `{"jsonrpc":"2.0","id":${id},"method":"claw.memory.compact","params":{"store":"${s}"}}`;
  };

  const a = newAgent();
  const snapshot = async (c: ClawRun) => ({
    conv: (await all(c, 'conv')).map((e) => [e.id, e.content, e.key, e.metadata]),
    tasks: (await query(c, 'tasks', { type: 'time-range', time_range: {} })).result.entries.map((e: any) => [e.id, e.content, e.key]),
  });
  let id = 0;
  let before: unknown;
  const codes = new Map<number, number>();
  for (let round = 0; round < 3; round++) {
    const c = await start(a);
    if (before !== undefined) assert.equal(await snapshot(c), before, `round ${round}: the restart changed the data`);
    const pending: Promise<any>[] = [];
    for (let i = 0; i < 150; i++) {
      const n = ++id;
      c.sendRaw(`${frame(n)}\n`);
      pending.push(c.waitFor((m) => m.id === n, 30_000));
      if (pending.length >= 8) await Promise.all(pending.splice(0));
    }
    for (const reply of await Promise.all(pending)) void reply;
    for (const m of c.messages) if (m.error) codes.set(m.error.code, (codes.get(m.error.code) ?? 0) + 1);
    before = await snapshot(c);
    assertCleanStreams(c);
    assert.is(await endWithin(c), 0);
  }
  const c = await start(a);
  assert.equal(await snapshot(c), before, 'the last restart changed the data');
  assert.is(await endWithin(c), 0);
  for (const bad of [-32603, -32030, -32031]) assert.not.ok(codes.has(bad), `error ${bad} answered ${codes.get(bad)} times: ${JSON.stringify([...codes])}`);
  assert.ok((codes.get(-32602) ?? 0) > 0, 'the fuzz reached the refusals');
});

test.run();
