// Issue 4 acceptance: backend errors map to the profile's extended catalog (runtime profile §4) — a failed
// query is -32031, a failed store/compact -32030 — with a message that names the store and says what failed,
// and the runtime stays up (other stores of the same database keep answering). The failure is a real SQLite
// error: the semantic store's full-text table is dropped under the module, as a damaged database would have it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryModule } from '../../src/runtime/memory-module.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import type { Session } from '../../src/kernel/agent.ts';
import { captureLogger, makeManifest, primitive } from './helpers/fakes.ts';

const dirs: string[] = [];

function session(): Session {
  const stores = [
    { name: 'context', type: 'conversation' },
    { name: 'notes', type: 'semantic' },
  ];
  return {
    manifest: makeManifest(3, { memory: primitive('Memory', 'mem', { stores }) }),
    protocolVersion: '0.3.0',
    level: 3,
    capabilities: {},
    abort: new AbortController(),
  };
}

/** The reply of one method call: its result, or the ProtocolError it threw. */
async function call(mod: ReturnType<typeof memoryModule>, method: string, params: unknown): Promise<{ result?: any; error?: ProtocolError }> {
  try {
    return { result: await mod.methods![method].handler(params, { transport: 'test' } as any, {} as any) };
  } catch (e) {
    assert.ok(e instanceof ProtocolError, `${method} threw a non-protocol error: ${String(e)}`);
    return { error: e as ProtocolError };
  }
}

let n = 0;
const rid = () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;

test('a SQLite failure under a query is -32031, under a store -32030, both naming the store; other stores keep working', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-mem-errors-'));
  dirs.push(dataDir);
  const log = captureLogger();
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log, dataDir });
  await mod.start!(session(), {} as any);
  try {
    const ok = await call(mod, 'claw.memory.store', { store: 'notes', entries: [{ content: 'revenue grew fast' }], context: { request_id: rid() } });
    assert.is(ok.result?.stored, 1);
    assert.is((await call(mod, 'claw.memory.store', { store: 'context', entries: [{ content: 'before the damage' }], context: { request_id: rid() } })).result?.stored, 1);
    // Damage the database under the module: the semantic store's FTS table (claw_memory_fts_<hex(name)>) goes.
    const db = (mod.conversationStore() as any).db;
    db.exec(`DROP TABLE claw_memory_fts_${Buffer.from('notes').toString('hex')}`);

    const q = await call(mod, 'claw.memory.query', { store: 'notes', query: { type: 'semantic', text: 'revenue' } });
    assert.is(q.error?.code, -32031);
    assert.match(q.error!.message, /^Memory query failed: store "notes": .*no such table: claw_memory_fts_6e6f746573/);
    assert.equal(q.error!.data, { store: 'notes', reason: 'internal', retryable: true });

    const s = await call(mod, 'claw.memory.store', { store: 'notes', entries: [{ content: 'more revenue' }], context: { request_id: rid() } });
    assert.is(s.error?.code, -32030);
    assert.match(s.error!.message, /^Memory backend error: store "notes": .*no such table: (main\.)?claw_memory_fts_6e6f746573/);
    assert.ok(log.entries.some((e) => e.level === 'error' && e.msg === 'memory backend error' && e.fields?.store === 'notes'), log.text());

    // The module stays up: the other store of the same database still reads. (Writes to it fail too, -32030:
    // the FTS triggers sit on the entries table every store of the Memory shares.)
    const back = await call(mod, 'claw.memory.query', { store: 'context', query: { type: 'time-range', time_range: {} } });
    assert.equal(back.result.entries.map((e: any) => e.content), ['before the damage']);
    const w = await call(mod, 'claw.memory.store', { store: 'context', entries: [{ content: 'x' }], context: { request_id: rid() } });
    assert.is(w.error?.code, -32030);
  } finally {
    await mod.stop?.({} as any);
  }
});

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test.run();
