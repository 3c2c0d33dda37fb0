// Lazy capability modules (src/runtime/lazy-module.ts, lazy-descriptors.ts; BENCH.md "Round 4: lazy modules"):
// the implementation loads only for a session that needs it, its handlers replace the static ones in place
// (no extra promise per call), accessors answer undefined before load, and a table mismatch is refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lazyModule } from '../../src/runtime/lazy-module.ts';
import { lazyMemory, lazyTools } from '../../src/runtime/lazy-descriptors.ts';
import type { ToolsModule } from '../../src/runtime/tools-module.ts';
import type { MemoryModule } from '../../src/runtime/memory-module.ts';
import type { LedgerStore } from '../../src/kernel/ledger.ts';

const session = (level: number, manifest: Record<string, unknown> = {}) => ({ level, manifest: { tools: [], policies: [], ...manifest } }) as any;
const core = {} as any;

function fakeTools(log: string[], states: ('READY' | 'STOPPING')[] = ['READY']): ToolsModule {
  const agentTools = { list: () => [], call: async () => ({ ok: true }) } as any;
  return {
    name: 'tools',
    methods: {
      'claw.tool.call': { level: 2, states, handler: (p) => ({ echoed: p }) },
      'claw.tool.approve': { level: 2, states: ['READY', 'STOPPING'], handler: () => ({ acknowledged: true }) },
      'claw.tool.deny': { level: 2, states: ['READY', 'STOPPING'], handler: () => ({ acknowledged: false }) },
    },
    agentTools: () => agentTools,
    audit: () => undefined,
    async start() {
      log.push('start');
    },
    async stop() {
      log.push('stop');
    },
  };
}

test('tools: not loaded for a level-1 session without tools, policies or agent loop; loaded once at level 2', async () => {
  const log: string[] = [];
  let loads = 0;
  const m = lazyTools(false, async () => (loads++, fakeTools(log)));
  assert.is(m.agentTools(), undefined);
  const staticHandler = m.methods!['claw.tool.call'].handler;
  await m.start!(session(1), core);
  await m.stop!(session(1));
  assert.is(loads, 0);
  assert.equal(log, []);
  assert.throws(() => staticHandler({}, {} as any, core), /not available/);
  await m.start!(session(2), core);
  assert.is(loads, 1);
  assert.equal(log, ['start']);
  assert.ok(m.agentTools());
  // Replaced in place: the same spec object now answers synchronously with the implementation's value.
  const r = m.methods!['claw.tool.call'].handler({ a: 1 }, {} as any, core);
  assert.not.ok(r instanceof Promise);
  assert.equal(r, { echoed: { a: 1 } });
  await m.stop!(session(2));
  await m.start!(session(2), core);
  assert.is(loads, 1);
  assert.equal(log, ['start', 'stop', 'start']);
});

test('tools: the agent loop or a manifest with policies needs the implementation at level 1', async () => {
  let loads = 0;
  await lazyTools(true, async () => (loads++, fakeTools([]))).start!(session(1), core);
  await lazyTools(false, async () => (loads++, fakeTools([]))).start!(session(1, { policies: [{ name: 'p' }] }), core);
  assert.is(loads, 2);
});

test('a static table that does not match the implementation is refused at load', async () => {
  const m = lazyTools(false, async () => fakeTools([], ['READY', 'STOPPING']));
  try {
    await m.start!(session(2), core);
    assert.unreachable('should have thrown');
  } catch (e) {
    assert.match(String(e), /claw\.tool\.call does not match/);
  }
});

test('a failed load is retried by the next session, and stop is only called after a successful start', async () => {
  let calls = 0;
  const log: string[] = [];
  const m = lazyModule({
    name: 'x',
    needed: () => true,
    load: async () => {
      if (++calls === 1) throw new Error('boom');
      return { name: 'x', start: async () => void log.push('start'), stop: async () => void log.push('stop') };
    },
  });
  await m.start!(session(1), core).then(
    () => assert.unreachable('should have thrown'),
    (e) => assert.is((e as Error).message, 'boom'),
  );
  await m.stop!(session(1));
  assert.equal(log, []);
  await m.start!(session(1), core);
  await m.stop!(session(1));
  assert.equal(log, ['start', 'stop']);
  assert.is(calls, 2);
});

test('memory: the ledger is the fallback before load, the implementation gets the fallback before it starts', async () => {
  const saved: string[] = [];
  const fallback: LedgerStore = { load: async () => undefined, save: async (p: string) => void saved.push(`fallback:${p}`) } as any;
  const order: string[] = [];
  const impl: MemoryModule = {
    name: 'memory',
    methods: {
      'claw.memory.store': { level: 3, states: ['READY'], handler: () => 1 },
      'claw.memory.query': { level: 3, states: ['READY'], handler: () => 2 },
      'claw.memory.compact': { level: 3, states: ['READY'], handler: () => 3 },
    },
    ledgerStore(f) {
      order.push(f === fallback ? 'ledgerStore(fallback)' : 'ledgerStore(other)');
      return { load: async () => undefined, save: async (p: string) => void saved.push(`db:${p}`) } as any;
    },
    dedupStore: () => ({}) as any,
    conversationStore: () => undefined,
    async start() {
      order.push('start');
    },
  };
  const m = lazyMemory(async () => impl);
  const ledger = m.ledgerStore(fallback);
  await ledger.save('a', {} as any);
  assert.is(m.dedupStore(), undefined);
  await m.start!(session(1, { memory: { name: 'mem' } }), core);
  await ledger.save('b', {} as any);
  assert.equal(order, ['ledgerStore(fallback)', 'start']);
  assert.equal(saved, ['fallback:a', 'db:b']);
  assert.ok(m.dedupStore());
});

test.run();
