// file-read and http-fetch hold at most max_output_bytes for one call, whatever `max_bytes` asks, and
// file-read reads to the end of a file that answers one page per read(2) (/proc).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, realpathSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTINS } from '../../src/tools/builtins/index.ts';
import { createBuiltinImpl } from '../../src/tools/builtins/impl.ts';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import { fakeFetch, fakeRunner } from './helpers/gate-fakes.ts';

const ctx = (sandbox: SandboxSpec) => ({ signal: new AbortController().signal, requestId: 'r', sandbox });
const impl = (name: string, o: { fetch?: any; cwd?: string } = {}) => createBuiltinImpl(BUILTINS[name], { run: fakeRunner(), fetch: o.fetch ?? fakeFetch(), cwdFor: () => o.cwd ?? '/' });
const MiB = 1024 * 1024;

test('file-read: max_bytes beyond max_output_bytes reads only up to the cap (a 64 MiB file, 1e12 asked)', async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'claw-cap-')));
  try {
    writeFileSync(join(dir, 'big'), '');
    truncateSync(join(dir, 'big'), 64 * MiB); // sparse: no disk used
    const rd = impl('file-read', { cwd: dir });
    const scoped: SandboxSpec = { level: 'none', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: dir, permissions: 'ro' }] } } };
    for (const asked of [2_000_000_000, 1e12]) {
      const r = await rd.run({ path: 'big', max_bytes: asked }, ctx(scoped));
      assert.not.ok(r.isError, JSON.stringify(r).slice(0, 200));
      assert.is((r.content[0] as { text: string }).text.length, 10 * MiB, `max_bytes ${asked}`);
      assert.equal(r.content[1], { type: 'text', text: `[truncated at ${10 * MiB} bytes]` });
    }
    const small = await rd.run({ path: 'big', max_bytes: 1e9 }, ctx({ ...scoped, resource_limits: { max_output_bytes: 1000 } }));
    assert.is((small.content[0] as { text: string }).text.length, 1000);
    // Not a whole number: read as the default, never a RangeError.
    const odd = await rd.run({ path: 'big', max_bytes: 1.5 }, ctx(scoped));
    assert.is((odd.content[0] as { text: string }).text.length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('file-read: a /proc file larger than one page is read whole, not cut at the first read(2)', async () => {
  if (process.platform !== 'linux') return;
  const r = await impl('file-read').run({ path: '/proc/self/maps' }, ctx({ level: 'none' }));
  const got = (r.content[0] as { text: string }).text;
  const expected = readFileSync('/proc/self/maps', 'utf8');
  assert.ok(expected.length > 4096, `this process's maps are ${expected.length} bytes`);
  // The maps may change a little between the two reads; a cut at one page loses half or more.
  assert.ok(got.length > 4096 && got.length > expected.length * 0.9, `read ${got.length} of ${expected.length} bytes`);
  assert.ok(got.endsWith('\n'));
  assert.is(r.content.length, 1);
});

test('http-fetch: max_bytes beyond max_output_bytes is capped before the body is read', async () => {
  const f = fakeFetch();
  const hf = impl('http-fetch', { fetch: f });
  const net: SandboxSpec = { level: 'none', capabilities: { network: { mode: 'allow-all' } } };
  await hf.run({ url: 'https://a.com', max_bytes: 1e12 }, ctx(net));
  await hf.run({ url: 'https://a.com', max_bytes: 5000 }, ctx({ ...net, resource_limits: { max_output_bytes: 4096 } }));
  await hf.run({ url: 'https://a.com', max_bytes: 100 }, ctx(net));
  assert.equal(f.calls.map((c) => c.init.maxBytes), [10 * MiB, 4096, 100]);
});

test.run();
