// Issue 4 acceptance: `scope: per-channel` (key-value) and `isolation: per-channel` (workspace) through the
// claw.memory.* methods (docs/memory.md "Methods"): context.channel picks the partition; a manifest with exactly
// one channel defaults to it; with several and no context.channel the call is -32602 naming the store.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryModule } from '../../src/runtime/memory-module.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import type { Session } from '../../src/kernel/agent.ts';
import { captureLogger, makeManifest, primitive } from './helpers/fakes.ts';

const dirs: string[] = [];
const STORES = [
  { name: 'prefs', type: 'key-value', scope: 'per-channel' },
  { name: 'desk', type: 'workspace', path: 'desk', isolation: 'per-channel' },
];

function session(channels: string[]): Session {
  return {
    manifest: makeManifest(3, { memory: primitive('Memory', 'mem', { stores: STORES }), channels: channels.map((c) => primitive('Channel', c)) }),
    protocolVersion: '0.3.0',
    level: 3,
    capabilities: {},
    abort: new AbortController(),
  };
}

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

async function open(channels: string[]) {
  const dataDir = mkdtempSync(join(tmpdir(), 'claw-mem-scope-'));
  dirs.push(dataDir);
  const mod = memoryModule({ config: { memory: { adapter: 'sqljs' } } as any, log: captureLogger(), dataDir });
  await mod.start!(session(channels), {} as any);
  return { mod, dataDir };
}

test('per-channel key-value: partitions by context.channel; several channels and none given → -32602 naming the store', async () => {
  const { mod } = await open(['telegram', 'cli']);
  try {
    const put = (channel: string, content: string) => call(mod, 'claw.memory.store', { store: 'prefs', entries: [{ key: 'lang', content }], context: { request_id: rid(), channel } });
    assert.is((await put('telegram', 'fr')).result?.stored, 1);
    assert.is((await put('cli', 'en')).result?.stored, 1);
    const get = async (context?: object) => call(mod, 'claw.memory.query', { store: 'prefs', query: { type: 'key', key: 'lang' }, ...(context ? { context } : {}) });
    assert.equal((await get({ channel: 'telegram' })).result.entries.map((e: any) => e.content), ['fr']);
    assert.equal((await get({ channel: 'cli' })).result.entries.map((e: any) => e.content), ['en']);
    assert.equal((await get({ channel: 'nobody' })).result.entries, []);
    const none = await get();
    assert.is(none.error?.code, -32602);
    assert.is(none.error!.message, 'Invalid params: store "prefs" is per-channel: context.channel is required');
    assert.equal(none.error!.data, { store: 'prefs' });
    const noneStore = await call(mod, 'claw.memory.store', { store: 'prefs', entries: [{ key: 'lang', content: 'de' }], context: { request_id: rid() } });
    assert.is(noneStore.error?.code, -32602);
  } finally {
    await mod.stop?.({} as any);
  }
});

test('one declared channel is the default partition; per-channel workspace writes under a sub-directory per channel', async () => {
  const { mod, dataDir } = await open(['telegram']);
  try {
    assert.is((await call(mod, 'claw.memory.store', { store: 'prefs', entries: [{ key: 'lang', content: 'fr' }], context: { request_id: rid() } })).result?.stored, 1);
    const explicit = await call(mod, 'claw.memory.query', { store: 'prefs', query: { type: 'key', key: 'lang' }, context: { channel: 'telegram' } });
    assert.equal(explicit.result.entries.map((e: any) => e.content), ['fr']);

    assert.equal((await call(mod, 'claw.memory.store', { store: 'desk', entries: [{ key: 'todo.txt', content: 'tg list' }], context: { request_id: rid() } })).result, { stored: 1, ids: ['todo.txt'] });
    assert.equal((await call(mod, 'claw.memory.store', { store: 'desk', entries: [{ key: 'todo.txt', content: 'other list' }], context: { request_id: rid(), channel: 'other' } })).result, { stored: 1, ids: ['todo.txt'] });
    assert.is(readFileSync(join(dataDir, 'desk', 'telegram', 'todo.txt'), 'utf8'), 'tg list');
    assert.is(readFileSync(join(dataDir, 'desk', 'other', 'todo.txt'), 'utf8'), 'other list');
    assert.not.ok(existsSync(join(dataDir, 'desk', 'todo.txt')));
    const mine = await call(mod, 'claw.memory.query', { store: 'desk', query: { type: 'key', key: 'todo.txt' } });
    assert.equal(mine.result.entries.map((e: any) => e.content), ['tg list']);
  } finally {
    await mod.stop?.({} as any);
  }
});

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test.run();
