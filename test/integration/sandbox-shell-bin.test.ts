// shell.mode restricted judges the program the shell builtin is asked for (shell-interpreter.ts); what the
// runner then executes must be that same file: a relative bin from the tool's working directory, a bare
// name from the same directories the launcher searches.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectHost, type HostCapabilities } from '../../src/sandbox/host.ts';
import { runSandboxed } from '../../src/sandbox/runner.ts';
import { createBuiltinImpl } from '../../src/tools/builtins/impl.ts';
import { createShell } from '../../src/tools/builtins/shell.ts';
import { nodeProgramIo } from '../../src/tools/builtins/shell-interpreter.ts';
import { SandboxViolation } from '../../src/tools/types.ts';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import type { ProcessRunner } from '../../src/tools/runner-port.ts';
import { processDowngrade, testHost } from '../fixtures/sandbox/helpers.ts';

let host: HostCapabilities;
test.before(async () => {
  host = testHost(await detectHost());
});

const shellTool = (path: string, cwd: string) => {
  const run = ((o: Parameters<typeof runSandboxed>[0]) => runSandboxed({ ...o, env: { PATH: path }, host, allowDowngrade: processDowngrade(host), graceMs: 300 })) as unknown as ProcessRunner;
  return createBuiltinImpl(createShell(() => nodeProgramIo({ PATH: path })), { run, fetch: (() => Promise.reject(new Error('no'))) as never, cwdFor: () => cwd });
};
const ctx = (sandbox: SandboxSpec) => ({ signal: new AbortController().signal, requestId: 'r', sandbox, timeoutMs: 10_000 });
/** The call's text, or the violation's rule. */
const outcome = (p: Promise<{ content: { type: string; text?: string }[] }>) =>
  p.then(
    (r) => r.content.map((b) => b.text ?? '').join(''),
    (e) => (e instanceof SandboxViolation ? `violation ${e.rule}` : `error ${(e as Error).message}`),
  );

test('a relative bin runs from the tool\'s working directory, not from the runtime\'s cwd where a shell sits under that name', async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'claw-shbin-')));
  const before = process.cwd();
  try {
    mkdirSync(join(dir, 'runtime-cwd'));
    mkdirSync(join(dir, 'ws'));
    symlinkSync('/bin/sh', join(dir, 'runtime-cwd', 'helper'));
    process.chdir(join(dir, 'runtime-cwd'));
    const sh = shellTool('/usr/bin:/bin', join(dir, 'ws'));
    for (const level of ['none', 'process'] as const) {
      const got = await outcome(sh.run({ bin: './helper', argv: ['-c', 'echo RAN-A-COMMAND-STRING'] }, ctx({ level })));
      assert.not.match(got, /RAN-A-COMMAND-STRING/, `level ${level}: ${got}`);
      assert.match(got, /command not found/, `level ${level}`);
    }
    // The same name in the tool's working directory is judged and refused there.
    symlinkSync('/bin/sh', join(dir, 'ws', 'helper'));
    assert.is(await outcome(sh.run({ bin: './helper', argv: ['-c', 'echo x'] }, ctx({ level: 'none' }))), 'violation shell.mode');
  } finally {
    process.chdir(before);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bare name found only in the standard directories the launcher searches after PATH is judged there too', async () => {
  if (!existsSync('/usr/bin/rbash') && !existsSync('/bin/rbash')) return; // rbash → bash on Debian-like systems
  const sh = shellTool('/nonexistent', '/');
  const got = await outcome(sh.run({ bin: 'rbash', argv: ['-c', 'echo RAN-A-COMMAND-STRING'] }, ctx({ level: 'none' })));
  assert.is(got, 'violation shell.mode');
});

test.run();
