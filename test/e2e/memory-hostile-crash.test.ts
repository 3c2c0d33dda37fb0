// SIGKILL mid-burst with hostile values, through dist/claw.mjs (the bundled sql.js glue, not the sources): entries
// with a leading U+FEFF, NUL, FTS syntax, object content with `__proto__` / `constructor` keys, metadata with
// numbers at a double's edges. After every restart the database opens without an error and each acknowledged
// entry reads back exactly as it was sent, by time range and by key. Seed: CLAW_FUZZ_SEED.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { initParams, startClaw, type ClawRun } from './helpers/claw-process.ts';
import { stderrRecords } from './helpers/e2e-util.ts';
import { agentDir, all, query, rid } from './memory-agent.ts';
import { seededRandom } from '../helpers/rng.ts';

const SEED = Number(process.env.CLAW_FUZZ_SEED ?? 7);
const ROUNDS = 6;
const STORES = `        - name: "context"
          type: "conversation"
          backend: "sqlite"
        - name: "kv"
          type: "key-value"
          backend: "sqlite"`;

const PIECES = ['\ufeff', '\ufeffBOM', '\u0000', 'NUL\u0000x', '"', '*', 'NEAR', 'OR', '-x', "'", '\u{1f600}', 'e\u0301', 'word', '__proto__', ' '];
const EDGE_NUMBERS = [-0, 1e308, 5e-324, 2 ** 53 + 2, -(2 ** 63)];

function requestOrExit(c: ClawRun, method: string, params: unknown): Promise<any | undefined> {
  return Promise.race([c.request(method, params).catch(() => undefined), c.exited.then(() => undefined)]);
}

test(`SIGKILL during hostile stores: every acknowledged entry reads back exactly after each restart (seed ${SEED})`, async () => {
  const r = seededRandom(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const text = () => Array.from({ length: 1 + Math.floor(r() * 5) }, () => pick(PIECES)).join('');
  const a = agentDir({ stores: STORES, config: 'memory:\n  snapshot: { ratio: 0.5, min_journal_bytes: 8192 }\n' });
  /** id → [store, key, the content as a query returns it, the metadata's JSON text]. */
  const acked = new Map<string, [string, string | undefined, string, string | undefined]>();
  /** Every value sent to each key-value key, in the order sent (the store applies them in arrival order). */
  const kvSent = new Map<string, string[]>();
  let c: ClawRun | undefined;
  try {
    for (let round = 0; round <= ROUNDS; round++) {
      const where = `seed ${SEED} round ${round}`;
      c = startClaw(['run', a.manifest], { cwd: a.dir });
      const run = c;
      run.send({ jsonrpc: '2.0', id: 'init', method: 'claw.initialize', params: initParams() });
      const init = await run.waitFor((m) => m.id === 'init', 30_000);
      assert.ok(init.result, `${where}: ${JSON.stringify(init)} ${run.stderr().slice(-1500)}`);
      const got = new Map<string, [string, string | undefined]>();
      for (const e of await all(run, 'context')) got.set(e.id, [e.content, e.metadata === undefined ? undefined : JSON.stringify(e.metadata)]);
      for (const [id, [s, key, content, meta]] of acked) {
        if (s === 'kv') {
          // The last acknowledged value of the key, or one sent after it whose reply the kill cut off.
          const q = await query(run, 'kv', { type: 'key', key });
          const sent = kvSent.get(key!)!;
          const ok = sent.slice(sent.indexOf(content));
          assert.ok(q.result?.entries.length === 1 && ok.includes(q.result.entries[0].content), `${where}: kv ${JSON.stringify(key)}: ${JSON.stringify(q)}, expected one of ${JSON.stringify(ok)}`);
        } else assert.equal(got.get(id), [content, meta], `${where}: ${s} entry ${id}`);
      }
      assert.not.ok(stderrRecords(run.stderr()).some((l) => l.level === 'error'), `${where}: ${run.stderr().slice(-1500)}`);
      if (round === ROUNDS) {
        assert.is(await run.end(), 0);
        break;
      }
      let dead = false;
      let armed = false;
      const fallback = setTimeout(() => run.child.kill('SIGKILL'), 60_000);
      void run.exited.then(() => ((dead = true), clearTimeout(fallback)));
      const writer = async () => {
        while (!dead) {
          const s = pick(['context', 'kv']);
          const key = s === 'kv' ? `${text()}k` : undefined;
          const obj = r() < 0.4 ? JSON.parse(`{"__proto__":${JSON.stringify(text())},"constructor":${pick(EDGE_NUMBERS)},"t":${JSON.stringify(text())}}`) : undefined;
          const content = obj ?? text();
          const metadata = r() < 0.5 ? JSON.parse(`{"__proto__":{"n":${pick(EDGE_NUMBERS)}},"s":${JSON.stringify(text())}}`) : undefined;
          const shown = typeof content === 'string' ? content : JSON.stringify(content);
          if (key !== undefined) kvSent.set(key, [...(kvSent.get(key) ?? []), shown]);
          const reply = await requestOrExit(run, 'claw.memory.store', { store: s, entries: [{ content, key, metadata }], context: { request_id: rid() } });
          if (reply?.result) {
            // A later value of the same key replaces the earlier one (last writer wins).
            if (key !== undefined) for (const [id, v] of acked) if (v[0] === 'kv' && v[1] === key) acked.delete(id);
            acked.set(reply.result.ids[0], [s, key, shown, metadata && JSON.stringify(metadata)]);
            if (!armed) (armed = true), setTimeout(() => run.child.kill('SIGKILL'), Math.floor(r() * 200));
          } else if (reply?.error) assert.unreachable(`${where}: store failed ${JSON.stringify(reply.error)}`);
        }
      };
      await Promise.all([writer(), writer()]);
    }
    assert.ok(acked.size >= ROUNDS, `only ${acked.size} writes acknowledged`);
  } finally {
    c?.kill();
    rmSync(a.dir, { recursive: true, force: true });
  }
});

test.run();
