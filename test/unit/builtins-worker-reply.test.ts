// An OS-touching builtin under level `process` answers through the worker (`claw __builtin`): the
// parent reads the worker's stdout under the runner's output cap. A result within max_output_bytes must
// arrive whole even when its JSON would be larger (control characters, invalid UTF-8, base64).
// Driven here: impl.ts runInWorker → the real worker command → its stdout cut the way the runner cuts it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { BUILTINS } from '../../src/tools/builtins/index.ts';
import { createBuiltinImpl } from '../../src/tools/builtins/impl.ts';
import { builtinWorkerCommand } from '../../src/cli/builtin-worker.ts';
import { captureHead } from '../../src/sandbox/output.ts';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../../src/sandbox/spec-view.ts';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import type { ProcessRunner } from '../../src/tools/runner-port.ts';

const MiB = 1024 * 1024;

/** The worker in-process, its stdout kept up to the sandbox's max_output_bytes as runner.ts keeps it. */
const workerRunner = (): ProcessRunner & { caps: number[] } => {
  const caps: number[] = [];
  const run = (async (o: { stdin?: string | Uint8Array; sandbox: SandboxSpec }) => {
    const cap = o.sandbox.resource_limits?.max_output_bytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    caps.push(cap);
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const out = captureHead(stdout, cap);
    const env = { argv: [], stdin, stdout: { write: (s: string) => stdout.write(s) } } as never;
    stdin.end(o.stdin);
    const code = await builtinWorkerCommand(env);
    stdout.end();
    await out.closed;
    return { exitCode: code, signal: null, stdout: out.text(), stderr: '', stdoutTruncated: out.truncated(), timedOut: false, aborted: false, durationMs: 1, notes: [] };
  }) as unknown as ProcessRunner & { caps: number[] };
  run.caps = caps;
  return run;
};

test('file-read in the worker: 2 MiB of NUL bytes, 2 MiB of 0xff, 6 MiB as base64 arrive whole', async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'claw-wr-')));
  try {
    writeFileSync(join(dir, 'nul'), Buffer.alloc(2 * MiB));
    writeFileSync(join(dir, 'ff'), Buffer.alloc(2 * MiB, 0xff));
    writeFileSync(join(dir, 'a'), Buffer.alloc(6 * MiB, 97));
    const run = workerRunner();
    const rd = createBuiltinImpl(BUILTINS['file-read'], { run, fetch: run as never, cwdFor: () => dir, worker: { argv0: 'node', args: ['claw.mjs'], binds: [] } });
    const sandbox: SandboxSpec = { level: 'process', capabilities: { filesystem: { mode: 'scoped', mount_paths: [{ path: dir, permissions: 'ro' }] } } };
    const ctx = { signal: new AbortController().signal, requestId: 'r', sandbox };
    // Compared with ok(), not is(): a failing diff of megabytes is unreadable.
    const same = (r: { content: unknown[]; isError?: boolean }, want: string, what: string) => {
      const got = (r.content[0] as { text?: string }).text ?? '';
      assert.ok(r.content.length === 1 && got === want, `${what}: ${r.content.length} blocks, ${got.length} chars (${JSON.stringify(got.slice(0, 120))}), want ${want.length}`);
    };
    same(await rd.run({ path: 'nul', max_bytes: 2 * MiB }, ctx), '\0'.repeat(2 * MiB), 'NUL bytes');
    same(await rd.run({ path: 'ff', max_bytes: 2 * MiB }, ctx), '\ufffd'.repeat(2 * MiB), '0xff bytes');
    same(await rd.run({ path: 'a', max_bytes: 6 * MiB, encoding: 'base64' }, ctx), Buffer.alloc(6 * MiB, 97).toString('base64'), 'base64');
    // The 6 MiB of U+FFFD is over the 10 MiB result cap: cut there, said so, still a reply.
    const big = await rd.run({ path: 'ff', max_bytes: 2 * MiB }, { ...ctx, sandbox: { ...sandbox, resource_limits: { max_output_bytes: 1000 } } });
    assert.is(Buffer.byteLength((big.content[0] as { text: string }).text), 999); // 333 whole U+FFFD
    assert.equal(big.content.at(-1), { type: 'text', text: "[output truncated by the sandbox's max_output_bytes]" });
    assert.ok(run.caps.every((c) => c < 15 * MiB), `worker stdout caps ${run.caps}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('worker violations and errors still arrive as such', async () => {
  const run = workerRunner();
  const rd = createBuiltinImpl(BUILTINS['file-read'], { run, fetch: run as never, cwdFor: () => '/', worker: { argv0: 'node', args: ['claw.mjs'], binds: [] } });
  const ctx = { signal: new AbortController().signal, requestId: 'r', sandbox: { level: 'process', capabilities: { filesystem: { mode: 'deny' } } } as SandboxSpec };
  try {
    await rd.run({ path: '/etc/passwd' }, ctx);
    assert.unreachable();
  } catch (e) {
    assert.is((e as { rule?: string }).rule, 'filesystem');
  }
});

test.run();
