// Replay equivalence under hostile input (src/memory/sqlite/README.md "Rules for callers": writes replay to the same
// state). A seeded burst of claw.memory.* calls with awkward values — NUL, BOM, lone surrogates, astral pairs,
// FTS syntax, numbers at the edges of a double, object keys like `__proto__`, 64 KiB strings — then every
// query the burst could ask is answered, the database closed and reopened (snapshot + journal replay), and each
// must answer exactly as before. Invalid calls must be -32602 and write nothing (the journal does not grow).
// Seed: CLAW_FUZZ_SEED (printed on failure); time bound: FUZZ_MS.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { memoryHarness, type MemoryHarness } from './helpers/memory-module.ts';
import { seededRandom } from '../helpers/rng.ts';

const SEED = Number(process.env.CLAW_FUZZ_SEED ?? 20261208);
const FUZZ_MS = 4000;
const ROUNDS = 4;

const STORES = [
  { name: 'conv', type: 'conversation', retention: { max_entries: 40 } },
  { name: 'sum', type: 'conversation', compaction: { strategy: 'summarize' } },
  { name: 'notes', type: 'semantic' },
  { name: 'mine', type: 'semantic', scope: 'per-identity', retention: { max_entries: 25 } },
  { name: 'kv', type: 'key-value' },
  { name: 'cp', type: 'checkpoint', checkpoint: { max_snapshots: 3 } },
];
const KEYED = new Set(['kv', 'cp']);
const SEMANTIC = ['conv', 'sum', 'notes', 'mine'];
const IDENTITIES = ['alice', 'bob', '\u0000', '__proto__'];

const PIECES = [
  'revenue', 'Q4', 'alpha', 'beta', ' ', '"', '""', "'", '*', '-', 'NEAR', 'NEAR/2', 'OR', 'AND', 'NOT', '(', ')', ':',
  'content:', '^', '\u0000', '\ufeff', '\ud800', '\udfff', '\u{1f600}', 'é', 'e\u0301', 'ﬁ', '\u2028', '\\', '%', '_',
  "'; DROP TABLE claw_memory_entries; --", 'x*', '"unbalanced', '__proto__', 'constructor', '0', '-0', '1e308',
];
const NUMBERS = [0, -0, 1, -1, 0.1, 1e308, -1e308, 5e-324, 2 ** 53, 2 ** 53 + 2, -(2 ** 63), 123456789012345680000];
const KEYS = ['__proto__', 'constructor', 'prototype', '', 'a', '\u0000', '\ufeff', 'a.b', '$x', 'toString'];

function generator(r: () => number) {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const text = (): string => {
    if (r() < 0.02) return pick(PIECES).repeat(1 + Math.floor(r() * 65536));
    let s = '';
    for (let i = 1 + Math.floor(r() * 8); i > 0; i--) s += pick(PIECES) + (r() < 0.6 ? ' ' : '');
    return s;
  };
  const value = (depth: number): unknown => {
    const k = r();
    if (depth > 3 || k < 0.3) return text();
    if (k < 0.55) return pick(NUMBERS);
    if (k < 0.65) return pick([true, false, null]);
    if (k < 0.8) return Array.from({ length: Math.floor(r() * 3) }, () => value(depth + 1));
    return object(depth + 1);
  };
  const object = (depth: number): Record<string, unknown> => {
    // JSON.parse, as the wire does: `__proto__` becomes an own key.
    const pairs = Array.from({ length: Math.floor(r() * 4) }, () => `${JSON.stringify(r() < 0.5 ? pick(KEYS) : text())}:${JSON.stringify(value(depth))}`);
    return JSON.parse(`{${pairs.join(',')}}`);
  };
  const time = () =>
    pick(['2026-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z', '+275760-09-13T00:00:00.000Z', '-271821-04-20T00:00:00.000Z', '2026-12-08T01:02:03.456+05:30', new Date(Math.floor(r() * 4e12)).toISOString()]);
  const key = () => (r() < 0.5 ? pick(['task', 'k', 'K', 'k ', '\u0000k', '__proto__']) : text().slice(0, 40) || 'k');
  return { pick, text, value, object, time, key };
}

/** The journal and snapshot bytes on disk: a refused call must not change them. */
function diskBytes(dir: string): number {
  const mem = join(dir, 'memory');
  return readdirSync(mem).reduce((n, f) => n + statSync(join(mem, f)).size, 0);
}

test(`hostile claw.memory.* bursts answer the same after a reopen; refused calls write nothing (seed ${SEED})`, async () => {
  const r = seededRandom(SEED);
  const g = generator(r);
  // Small snapshot thresholds: rounds cross snapshots and journal rotations, not only a journal replay.
  const h: MemoryHarness = await memoryHarness(STORES, { memory: { adapter: 'sqljs', snapshot: { ratio: 0.5, min_journal_bytes: 16384 } } });
  const texts = new Set<string>(['revenue', '"', '*', 'NEAR']);
  const keys = new Set<string>(['task']);
  let reqN = 0;
  const sent: { id: string; params: unknown }[] = [];
  const where = (what: string) => `seed ${SEED}: ${what}`;
  const deadline = performance.now() + FUZZ_MS;
  let calls = 0;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const end = performance.now() + (deadline - performance.now()) / (ROUNDS - round);
      while (performance.now() < end) {
        calls++;
        const store = g.pick(STORES).name;
        const context = (extra: Record<string, unknown> = {}) => ({ ...extra, ...(store === 'mine' ? { identity: g.pick(IDENTITIES) } : {}) });
        const k = r();
        if (k < 0.5) {
          const entries = Array.from({ length: 1 + Math.floor(r() * 4) }, () => {
            const e: Record<string, unknown> = { content: r() < 0.7 ? g.text() : g.object(0) };
            if (KEYED.has(store) || r() < 0.1) keys.add((e.key = g.key()) as string);
            if (r() < 0.4) e.metadata = g.object(0);
            if (r() < 0.2) e.timestamp = g.time();
            return e;
          });
          // A retry of an earlier call (same params: the same ids, nothing written) now and then.
          const params =
            r() < 0.1 && sent.length > 0 ? g.pick(sent).params : { store, entries, context: context({ request_id: r() < 0.05 ? '\u0000' : `rq-${++reqN}` }) };
          const reply = await h.call('claw.memory.store', params);
          if (reply.result) sent.push({ id: String(reqN), params });
          else assert.is(reply.error?.code, -32602, where(`store: ${reply.error?.message}`));
        } else if (k < 0.8) {
          const t = g.text();
          texts.add(t);
          const q = g.pick([
            { type: 'semantic', text: t },
            { type: 'key', key: g.pick([...keys]) },
            { type: 'time-range', time_range: r() < 0.5 ? {} : { from: g.time(), to: g.time() } },
          ]);
          const reply = await h.call('claw.memory.query', { store, query: r() < 0.3 ? { ...q, top_k: 1 + Math.floor(r() * 5) } : q, context: context() });
          if (reply.error) assert.is(reply.error.code, -32602, where(`query ${JSON.stringify(q).slice(0, 200)}: ${reply.error.message}`));
          assert.ok(reply.ms < 1000, where(`query took ${Math.round(reply.ms)} ms`));
        } else if (k < 0.85) {
          const reply = await h.call('claw.memory.compact', { store, context: store === 'mine' ? context() : undefined });
          if (reply.error) assert.is(reply.error.code, -32602, where(`compact ${store}: ${reply.error.message}`));
        } else {
          // Wrong types, missing params, params as an array, out-of-range numbers: -32602, and nothing written.
          const bad = g.pick<unknown>([
            [store],
            null,
            { store },
            { store, entries: [], context: { request_id: 'x' } },
            { store, entries: [{ content: 1 }], context: { request_id: 'x' } },
            { store, entries: [{ content: [] }], context: { request_id: 'x' } },
            { store, entries: [{ content: 'x', metadata: [] }], context: { request_id: 'x' } },
            { store, entries: [{ content: 'x', key: '' }], context: { request_id: 'x' } },
            { store, entries: [{ content: 'x', timestamp: 'yesterday' }], context: { request_id: `bad-${reqN}` } },
            { store, entries: [{ content: 'x' }] },
            { store, entries: { 0: { content: 'x' } }, context: { request_id: 'x' } },
            { store: '', entries: [{ content: 'x' }], context: { request_id: 'x' } },
            { store: 'nope', entries: [{ content: 'x' }], context: { request_id: 'x' } },
            { store, query: { type: 'semantic', text: 'x', top_k: g.pick([0, -1, 0.5, 1e308, NaN, '5']) } },
            { store, query: { type: 'vector', text: 'x' } },
            { store, query: { type: 'time-range', time_range: { from: 'soon' } } },
            { store, query: { type: 'key' } },
          ]);
          const method = bad && typeof bad === 'object' && 'query' in bad ? 'claw.memory.query' : 'claw.memory.store';
          const before = diskBytes(h.dataDir);
          const reply = await h.call(method, bad);
          assert.is(reply.error?.code, -32602, where(`${method} ${JSON.stringify(bad)}: ${JSON.stringify(reply.result ?? reply.error?.message)}`));
          assert.is(diskBytes(h.dataDir), before, where(`refused ${JSON.stringify(bad)} wrote to the database`));
          assert.ok(reply.ms < 100, where(`refusing took ${Math.round(reply.ms)} ms`));
        }
      }
      // Everything the burst could ask, asked twice: before and after the reopen.
      const probes: [string, unknown][] = [];
      const sample = [...texts].slice(-40);
      for (const s of STORES) {
        const scopes = s.name === 'mine' ? IDENTITIES : [undefined];
        for (const identity of scopes) {
          const ctx = identity === undefined ? {} : { context: { identity } };
          probes.push([s.name, { store: s.name, query: { type: 'time-range', time_range: {} }, ...ctx }]);
          if (KEYED.has(s.name)) for (const key of keys) probes.push([s.name, { store: s.name, query: { type: 'key', key }, ...ctx }]);
          if (SEMANTIC.includes(s.name)) for (const text of sample) probes.push([s.name, { store: s.name, query: { type: 'semantic', text }, ...ctx }]);
        }
      }
      const answers = async () => Promise.all(probes.map(async ([, p]) => JSON.stringify(await h.call('claw.memory.query', p).then((x) => x.result ?? x.error?.code))));
      const before = await answers();
      await h.reopen();
      const after = await answers();
      probes.forEach(([, p], i) => assert.is(after[i], before[i], where(`round ${round}: ${JSON.stringify(p).slice(0, 300)} answers differently after the reopen`)));
    }
    assert.ok(calls > 100, `only ${calls} calls in ${FUZZ_MS} ms`);
  } finally {
    await h.dispose();
  }
});

test.run();
