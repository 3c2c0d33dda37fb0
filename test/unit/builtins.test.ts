// Builtins in-process (no worker): echo, shell (fake runner), file-read/-write (temp dir), http-fetch (fake fetch).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTINS } from '../../src/tools/builtins/index.ts';
import { createBuiltinImpl } from '../../src/tools/builtins/impl.ts';
import { SandboxViolation } from '../../src/tools/types.ts';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import { fakeFetch, fakeRunner, ok, runOutcome } from './helpers/gate-fakes.ts';

const ctx = (sandbox: SandboxSpec) => ({ signal: new AbortController().signal, requestId: 'r', sandbox });
const impl = (name: string, o: { run?: any; fetch?: any; cwd?: string } = {}) => createBuiltinImpl(BUILTINS[name], { run: o.run ?? fakeRunner(), fetch: o.fetch ?? fakeFetch(), cwdFor: () => o.cwd ?? '/' });
const violation = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    assert.instance(e, SandboxViolation);
    return { rule: (e as SandboxViolation).rule, detail: (e as SandboxViolation).detail };
  }
  assert.unreachable('expected a SandboxViolation');
};

test('echo', async () => {
  assert.equal(await impl('echo').run({ text: 'hi' }, ctx({ level: 'none' })), ok('hi'));
  assert.equal(await impl('echo').run({ text: 1 }, ctx({ level: 'none' })), { content: [{ type: 'text', text: 'echo needs a string "text" argument' }], isError: true });
});

test('shell: bin/argv without a shell; command only under shell.mode full; exit tail', async () => {
  const run = fakeRunner((r) => runOutcome(r.bin === 'false' ? { exitCode: 1, stderr: 'bad' } : { stdout: 'out' }));
  const sh = impl('shell', { run, cwd: '/w' });
  assert.is(sh.isShell, true);
  assert.equal(await sh.run({ bin: 'ls', argv: ['-l', 'a b'] }, ctx({ level: 'none' })), ok('out'));
  assert.equal([run.requests[0].bin, run.requests[0].argv, run.requests[0].cwd], ['ls', ['-l', 'a b'], '/w']);
  assert.is(sh.commandLine!({ bin: 'ls', argv: ['-l'] }, { level: 'none' }), 'ls -l');
  assert.is(sh.commandLine!({ command: 'ls | wc' }, { level: 'none' }), 'ls | wc');
  for (const mode of [undefined, 'restricted'] as const) {
    const sb: SandboxSpec = mode ? { level: 'none', capabilities: { shell: { mode } } } : { level: 'none' };
    assert.equal(await violation(sh.run({ command: 'ls | wc' }, ctx(sb))), { rule: 'shell.mode', detail: 'a command string needs shell.mode "full" (this sandbox is "restricted"); pass { bin, argv } instead' });
  }
  assert.is(run.requests.length, 1);
  await sh.run({ command: 'ls | wc' }, ctx({ level: 'none', capabilities: { shell: { mode: 'full' } } }));
  assert.equal([run.requests[1].bin, run.requests[1].argv], ['/bin/sh', ['-c', 'ls | wc']]);
  assert.equal(await sh.run({ bin: 'false' }, ctx({ level: 'none' })), { content: [{ type: 'text', text: '\n[exit 1]\nbad' }], isError: true });
  assert.equal(await sh.run({}, ctx({ level: 'none' })), { content: [{ type: 'text', text: 'shell needs { bin, argv? } or { command }' }], isError: true });
});

test('file-read / file-write under scoped, read-only, deny, denied_paths', async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'claw-bi-')));
  try {
    writeFileSync(join(dir, 'a.txt'), 'héllo');
    const rd = impl('file-read', { cwd: dir });
    const wr = impl('file-write', { cwd: dir });
    const scoped: SandboxSpec = { level: 'none', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: dir, permissions: 'rw' }, { path: `${dir}/ro`, permissions: 'ro' }], denied_paths: [`${dir}/secret`] } } };
    assert.equal(await rd.run({ path: 'a.txt' }, ctx(scoped)), ok('héllo'));
    assert.equal(await rd.run({ path: 'a.txt', max_bytes: 2, encoding: 'base64' }, ctx(scoped)), { content: [{ type: 'text', text: 'aMM=' }, { type: 'text', text: '[truncated at 2 bytes]' }] });
    assert.equal(await wr.run({ path: 'sub/b.txt', content: 'x', create_dirs: true }, ctx(scoped)), ok('wrote 1 bytes to sub/b.txt'));
    await wr.run({ path: 'sub/b.txt', content: 'yz', append: true }, ctx(scoped));
    assert.is(readFileSync(join(dir, 'sub/b.txt'), 'utf8'), 'xyz');
    assert.is((await violation(wr.run({ path: 'ro/c.txt', content: 'x' }, ctx(scoped))))!.detail, `ro/c.txt is in read-only mount ${dir}/ro`);
    assert.is((await violation(rd.run({ path: '../outside' }, ctx(scoped))))!.rule, 'filesystem');
    assert.is((await violation(rd.run({ path: 'secret/k' }, ctx(scoped))))!.detail, `secret/k is inside denied path ${dir}/secret`);
    const ro: SandboxSpec = { level: 'none', capabilities: { filesystem: { mode: 'read-only' } } };
    assert.equal(await rd.run({ path: 'a.txt' }, ctx(ro)), ok('héllo'));
    assert.equal(await violation(wr.run({ path: 'a.txt', content: 'x' }, ctx(ro))), { rule: 'filesystem', detail: 'the sandbox filesystem is read-only (filesystem.mode: read-only)' });
    assert.equal(await violation(rd.run({ path: 'a.txt' }, ctx({ level: 'none', capabilities: { filesystem: { mode: 'deny' } } }))), { rule: 'filesystem', detail: 'the sandbox denies filesystem access (filesystem.mode: deny)' });
    assert.is((await rd.run({ path: 'missing.txt' }, ctx(scoped))).isError, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('http-fetch: network deny / absent refused; status >= 400 is isError; head line', async () => {
  const f = fakeFetch({ status: 404, headers: { 'content-type': ['text/html', 'x'] }, body: 'nf', truncated: true, finalUrl: 'https://a.com/final' });
  const hf = impl('http-fetch', { fetch: f });
  for (const sb of [{ level: 'none', capabilities: { network: { mode: 'deny' } } }] as SandboxSpec[]) {
    assert.equal(await violation(hf.run({ url: 'https://a.com' }, ctx(sb))), { rule: 'network.mode', detail: 'the sandbox denies network access' });
  }
  assert.is(f.calls.length, 0);
  const net = { mode: 'allowlist' as const, allowed_hosts: ['a.com'] };
  assert.equal(await hf.run({ url: 'https://a.com', method: 'POST', body: 'b', headers: { h: '1' }, max_bytes: 10 }, ctx({ level: 'none', capabilities: { network: net } })), {
    content: [{ type: 'text', text: 'HTTP 404 text/html https://a.com/final (body truncated)' }, { type: 'text', text: 'nf' }],
    isError: true,
  });
  assert.equal(f.calls[0].init.method, 'POST');
  assert.equal(f.calls[0].init.maxBytes, 10);
  assert.equal(f.calls[0].network, net);
  const g = impl('http-fetch', { fetch: fakeFetch({ headers: {} }) });
  assert.equal(await g.run({ url: 'https://b.com' }, ctx({ level: 'none', capabilities: { network: { mode: 'allow-all' } } })), { content: [{ type: 'text', text: 'HTTP 200 unknown type https://b.com' }, { type: 'text', text: 'hello' }] });
});

test.run();
