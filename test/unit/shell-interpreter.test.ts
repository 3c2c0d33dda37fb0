// Restricted shell mode: a shell, interpreter or command runner as `bin` is a command string and is refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { interpreterOf, nodeProgramIo, programName, type ProgramIo } from '../../src/tools/builtins/shell-interpreter.ts';
import { createShell } from '../../src/tools/builtins/shell.ts';
import { createBuiltinImpl } from '../../src/tools/builtins/impl.ts';
import { SandboxViolation } from '../../src/tools/types.ts';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import { fakeFetch, fakeRunner, runOutcome } from './helpers/gate-fakes.ts';

const fakeIo = (files: Record<string, { real?: string; head?: string }>, pathDirs = ['/usr/bin', '/bin']): ProgramIo => ({
  pathDirs,
  realpath: (p) => (p in files ? (files[p].real ?? p) : undefined),
  head: (p) => files[p]?.head,
});

test('shells, interpreters and runners by name, versioned names included', () => {
  const io = fakeIo({});
  for (const bin of ['sh', '/bin/sh', '/bin/bash', 'dash', 'zsh', '/usr/bin/ksh', 'fish', 'busybox', 'python', 'python3', 'python3.11', '/usr/bin/perl5.36.0', 'ruby3.1', 'node', 'nodejs', 'php8.2', 'lua5.4', 'luajit', 'awk', 'gawk', 'mawk', 'env', '/usr/bin/env', 'nice', 'timeout', 'nohup', 'stdbuf', 'setsid', 'xargs', 'sudo', 'doas', 'chroot', 'BASH', 'tclsh8.6']) {
    assert.ok(interpreterOf(bin, '/w', io), bin);
  }
  for (const bin of ['ls', '/bin/echo', 'grep', 'cat', 'base64', 'sha256sum', 'true', 'shellcheck', 'envsubst']) assert.is(interpreterOf(bin, '/w', io), undefined, bin);
  assert.is(programName('/usr/bin/python3.11'), 'python');
});

test('through symlinks, PATH lookups and #! lines', () => {
  const io = fakeIo({
    '/usr/bin/innocent': { real: '/usr/bin/busybox' },
    '/w/tool': { real: '/bin/dash' },
    '/w/run': { head: '#!/bin/sh\necho hi\n' },
    '/w/run.py': { head: '#!/usr/bin/env -S python3 -u\nprint(1)\n' },
    '/usr/bin/ok': { head: '\x7fELF' },
  });
  assert.is(interpreterOf('innocent', '/w', io), 'busybox');
  assert.is(interpreterOf('./tool', '/w', io), 'dash');
  assert.is(interpreterOf('/w/run', '/', io), 'sh');
  assert.is(interpreterOf('run.py', '/w', { ...io, pathDirs: ['/w'] }), 'python');
  assert.is(interpreterOf('ok', '/w', io), undefined);
});

test('on the real file system: a symlink to /bin/sh under another name, and a script', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'claw-interp-')));
  try {
    symlinkSync('/bin/sh', join(dir, 'innocent'));
    writeFileSync(join(dir, 'job'), '#!/bin/sh\nid\n');
    chmodSync(join(dir, 'job'), 0o755);
    const io = nodeProgramIo({ PATH: `${dir}:/usr/bin:/bin` });
    assert.ok(interpreterOf('innocent', '/', io));
    assert.ok(interpreterOf(`${dir}/job`, '/', io));
    assert.is(interpreterOf('ls', '/', io), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const ctx = (sandbox: SandboxSpec) => ({ signal: new AbortController().signal, requestId: 'r', sandbox });

test('the shell builtin refuses them unless shell.mode is full, before anything runs', async () => {
  const run = fakeRunner(() => runOutcome({ stdout: 'ran' }));
  const sh = createBuiltinImpl(createShell(() => fakeIo({})), { run, fetch: fakeFetch(), cwdFor: () => '/w' });
  const restricted: SandboxSpec = { level: 'none', capabilities: { shell: { mode: 'restricted' } } };
  for (const args of [
    { bin: '/bin/sh', argv: ['-c', 'rm -rf /'] },
    { bin: 'bash', argv: ['-c', 'id'] },
    { bin: 'python3.11', argv: ['-c', 'import os; os.system("id")'] },
    { bin: 'env', argv: ['sh', '-c', 'id'] },
    { bin: 'xargs', argv: ['rm'] },
    { bin: 'busybox', argv: ['sh', '-c', 'id'] },
  ]) {
    for (const sb of [restricted, { level: 'none' } as SandboxSpec]) {
      try {
        await sh.run(args, ctx(sb));
        assert.unreachable(`${args.bin} ran`);
      } catch (e) {
        assert.instance(e, SandboxViolation);
        assert.is((e as SandboxViolation).rule, 'shell.mode');
        assert.match((e as SandboxViolation).detail, /shell\.mode "full"/);
      }
    }
  }
  assert.is(run.requests.length, 0);
  await sh.run({ bin: 'ls', argv: ['-l'] }, ctx(restricted));
  await sh.run({ bin: '/bin/sh', argv: ['-c', 'id'] }, ctx({ level: 'none', capabilities: { shell: { mode: 'full' } } }));
  assert.equal(run.requests.map((r: any) => r.bin), ['ls', '/bin/sh']);
});


test('the dynamic loader, and a file that is neither ELF nor #! (execvp hands it to /bin/sh)', () => {
  const io = fakeIo({
    '/lib64/ld-linux-x86-64.so.2': { head: '\x7fELF' },
    '/lib/ld-musl-armhf.so.1': { head: '\x7fELF' },
    '/lib/ld-2.31.so': { head: '\x7fELF' },
    '/w/noshebang': { head: 'id; curl x | sh\n' },
    '/w/empty': { head: '' },
    '/usr/bin/ld': { head: '\x7fELF' },
  });
  for (const bin of ['/lib64/ld-linux-x86-64.so.2', '/lib/ld-musl-armhf.so.1', '/lib/ld-2.31.so']) assert.is(interpreterOf(bin, '/w', io), 'ld.so', bin);
  // A command string as an ordinary option: make --eval, dc -e '!id', vim -c '!id', socat EXEC:…, tmux new 'id', pkexec id.
  for (const bin of ['make', 'dc', 'vim', 'vi', 'ex', 'emacs', 'socat', 'tmux', 'screen', 'pkexec']) assert.ok(interpreterOf(bin, '/w', io), bin);
  assert.is(interpreterOf('./noshebang', '/w', io), 'sh');
  assert.is(interpreterOf('/w/empty', '/', io), 'sh');
  assert.is(interpreterOf('/usr/bin/ld', '/', io), undefined);
});

test('on the real file system: a script without #! runs as sh, and the loader runs anything', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'claw-interp-')));
  try {
    writeFileSync(join(dir, 'job'), 'id\n');
    chmodSync(join(dir, 'job'), 0o755);
    const io = nodeProgramIo({ PATH: '/usr/bin:/bin' });
    assert.is(interpreterOf(`${dir}/job`, '/', io), 'sh');
    for (const loader of ['/lib64/ld-linux-x86-64.so.2', '/lib/ld-linux-aarch64.so.1', '/lib/ld-linux-armhf.so.3']) {
      if (io.realpath(loader)) assert.is(interpreterOf(loader, '/', io), 'ld.so', loader);
    }
    assert.is(interpreterOf('ls', '/', io), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
