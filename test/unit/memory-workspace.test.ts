// Workspace stores (src/memory/stores/workspace.ts) and path resolution (src/memory/service.ts resolveWorkspacePath):
// templates, isolation, escapes (.., absolute, symlinks), max_size_mb, queries, compact refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceStore } from '../../src/memory/stores/workspace.ts';
import { MemoryParamsError, type StoreSpec } from '../../src/memory/stores/types.ts';
import { resolveWorkspacePath } from '../../src/memory/service.ts';
import { ClawError } from '../../src/protocol/errors.ts';

const base = mkdtempSync(join(tmpdir(), 'claw-workspace-'));
let n = 0;
const fresh = () => join(base, `w${n++}`);
const spec = (over: Partial<StoreSpec> = {}): StoreSpec => ({ name: 'files', type: 'workspace', ...over }) as StoreSpec;

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as ClawError).code;
  }
  return 'resolved';
}

test('path: {identity_name} and {tenant_id} resolved, ~ is HOME, relative under data_dir, default per store', () => {
  const o = { dataDir: '/var/lib/claw', vars: { identity_name: 'ada', tenant_id: 't1' }, home: '/home/pi' };
  assert.is(resolveWorkspacePath(spec({ path: '~/.claw/workspaces/{identity_name}/' }), o), '/home/pi/.claw/workspaces/ada/');
  assert.is(resolveWorkspacePath(spec({ path: '/srv/{tenant_id}/{identity_name}' }), o), '/srv/t1/ada');
  assert.is(resolveWorkspacePath(spec({ path: 'ws/{identity_name}' }), o), '/var/lib/claw/ws/ada');
  assert.is(resolveWorkspacePath(spec(), o), '/var/lib/claw/workspaces/files');
  assert.throws(() => resolveWorkspacePath(spec({ path: '/srv/{project}' }), o), /path variable \{project\} has no value/);
  assert.throws(() => resolveWorkspacePath(spec({ path: '/srv/{identity_name}' }), { ...o, vars: { identity_name: '../etc' } }), /is not a path segment/);
  assert.throws(() => resolveWorkspacePath(spec({ path: '~/x' }), { ...o, home: undefined }), /HOME is not set/);
});

test('store/query: files by relative path, ids are paths, key / time-range / semantic queries', async () => {
  const root = fresh();
  const s = new WorkspaceStore(spec(), root);
  assert.equal(await s.store([{ key: 'notes/a.txt', content: 'solar panel output' }, { key: './b.json', content: { v: 1 } }]), ['notes/a.txt', 'b.json']);
  assert.is(readFileSync(join(root, 'notes', 'a.txt'), 'utf8'), 'solar panel output');
  assert.is(readFileSync(join(root, 'b.json'), 'utf8'), '{"v":1}');
  assert.equal((await s.query({ type: 'key', key: 'notes//a.txt' })).entries.map((e) => [e.id, e.content]), [['notes/a.txt', 'solar panel output']]);
  assert.equal((await s.query({ type: 'key', key: 'missing.txt' })).entries, []);
  const tr = await s.query({ type: 'time-range', time_range: { from: '2000-01-01T00:00:00Z' } });
  assert.equal(tr.entries.map((e) => e.id).sort(), ['b.json', 'notes/a.txt']);
  const sem = await s.query({ type: 'semantic', text: 'solar' });
  assert.equal(sem.entries.map((e) => e.id), ['notes/a.txt']);
  assert.ok(sem.entries[0].score! > 0 && sem.entries[0].score! < 1);
  assert.is(s.count(), 2);
  assert.is(await code(s.query({ type: 'vector' as never })), 'memory.unsupported_query');
  assert.is(await code(s.compact()), 'memory.unsupported_method');
  try {
    await s.compact();
  } catch (e) {
    assert.instance(e, MemoryParamsError);
  }
});

test('keys cannot leave the partition: .., absolute, NUL, temporaries, symlinked directories and files', async () => {
  const root = fresh();
  const outside = fresh();
  mkdirSync(outside, { recursive: true });
  const s = new WorkspaceStore(spec(), root);
  for (const key of ['../x', 'a/../../x', '/etc/passwd', 'a\0b', '.claw-tmp-1', '', '.'])
    assert.is(await code(s.store([{ key, content: 'x' }])), key === '' ? 'memory.key_required' : 'memory.invalid_key', key);
  symlinkSync(outside, join(root, 'link'));
  assert.is(await code(s.store([{ key: 'link/x.txt', content: 'x' }])), 'memory.invalid_key');
  assert.not.ok(existsSync(join(outside, 'x.txt')));
  writeFileSync(join(outside, 'target'), 'secret');
  symlinkSync(join(outside, 'target'), join(root, 'f'));
  assert.is(await code(s.store([{ key: 'f', content: 'overwrite' }])), 'memory.invalid_key');
  assert.is(readFileSync(join(outside, 'target'), 'utf8'), 'secret');
  assert.is(await code(s.query({ type: 'key', key: 'link/../../x' })), 'memory.invalid_key');
});

test('isolation: per-identity partitions are separate directories; a scope value is required', async () => {
  const root = fresh();
  const s = new WorkspaceStore(spec({ isolation: 'per-identity' }), root);
  await s.store([{ key: 'a.txt', content: 'ada' }], { scope: 'ada' });
  await s.store([{ key: 'a.txt', content: 'bob' }], { scope: 'bob' });
  assert.is(readFileSync(join(root, 'ada', 'a.txt'), 'utf8'), 'ada');
  assert.equal((await s.query({ type: 'key', key: 'a.txt' }, { scope: 'bob' })).entries.map((e) => e.content), ['bob']);
  assert.is(await code(s.store([{ key: 'a.txt', content: 'x' }])), 'memory.scope_required');
  await s.store([{ key: 'b.txt', content: 'x' }], { scope: '../ada' }); // encoded: one directory level, not a path
  assert.ok(existsSync(join(root, encodeURIComponent('../ada'), 'b.txt')));
});

test('max_size_mb: a call that would go over is refused whole; overwriting counts the new size only', async () => {
  const root = fresh();
  const s = new WorkspaceStore(spec({ max_size_mb: 1 }), root);
  const half = 'x'.repeat(512 * 1024);
  await s.store([{ key: 'a', content: half }]);
  assert.is(await code(s.store([{ key: 'b', content: half }, { key: 'c', content: 'y' }])), 'memory.workspace_full');
  assert.not.ok(existsSync(join(root, 'b')), 'nothing of the refused call was written');
  assert.equal(await s.store([{ key: 'a', content: half }, { key: 'b', content: half }]), ['a', 'b'], 'exactly 1 MiB fits');
  assert.is(await code(s.store([{ key: 'c', content: 'y' }])), 'memory.workspace_full');
});

test.after(() => rmSync(base, { recursive: true, force: true }));

test.run();
