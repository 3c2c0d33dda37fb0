// network deny under bubblewrap: a unix socket bound to a path is not reachable through the filesystem
// (D-Bus, docker, systemd, X11, a local service), in every filesystem mode that would show it.
// Abstract sockets are per network namespace: checked as well. Control: reachable under allow-all.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import { detectHost, type HostCapabilities } from '../../src/sandbox/host.ts';
import { runSandboxed } from '../../src/sandbox/runner.ts';
import { boundSocketPaths } from '../../src/sandbox/unix-sockets.ts';
import { testHost } from '../fixtures/sandbox/helpers.ts';

let host: HostCapabilities;
test.before(async () => {
  host = testHost(await detectHost());
});

const listen = (s: Server, at: string) => new Promise<void>((r) => s.listen(at, r));
const probe = (at: string) => `require('net').connect(${JSON.stringify(at)}).on('connect',()=>{console.log('connected');process.exit(0)}).on('error',(e)=>console.log('refused '+e.code))`;

test('boundSocketPaths: path sockets of /proc/net/unix that are sockets now; abstract and crafted names are not', async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'claw-usock-')));
  const server = createServer();
  try {
    const sock = join(dir, 'a b.sock');
    await listen(server, sock);
    writeFileSync(join(dir, 'plain'), '');
    const table = [
      'Num       RefCount Protocol Flags    Type St Inode Path',
      `0000000000000000: 00000002 00000000 00010000 0001 01 11 ${sock}`,
      '0000000000000000: 00000002 00000000 00010000 0001 01 12 @abstract-name',
      `0000000000000000: 00000002 00000000 00010000 0001 01 13 ${join(dir, 'plain')}`,
      '0000000000000000: 00000003 00000000 00000000 0001 03 14',
      `0000000000000000: 00000002 00000000 00010000 0001 01 15 ${join(dir, 'gone.sock')}`,
    ].join('\n');
    assert.equal(await boundSocketPaths(table), [sock]);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('network deny: a path socket of the host is not reachable under read-only, full or a scoped mount around it', async () => {
  if (!host.bwrap.works) return; // network deny is refused without bubblewrap (sandbox-runner.test.ts)
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'claw-usock-')));
  const path = createServer((c) => c.on('error', () => undefined).end('hi\n'));
  const abstract = createServer((c) => c.on('error', () => undefined).end('hi\n'));
  const name = `\0claw-usock-${process.pid}`;
  try {
    await listen(path, join(dir, 'svc.sock'));
    await listen(abstract, name);
    const run = (sandbox: SandboxSpec, at: string) =>
      runSandboxed({ bin: process.execPath, argv: ['-e', probe(at)], env: { PATH: '/usr/bin:/bin' }, sandbox, host, timeoutMs: 10_000, graceMs: 300 }).then((r) => `${r.stdout.trim()}${r.stderr ? ` / ${r.stderr.slice(-300)}` : ''}`);
    const fs = (mode: 'read-only' | 'full' | 'scoped') => ({ mode, mount_paths: mode === 'scoped' ? [{ path: dir, permissions: 'ro' as const }] : undefined });
    for (const mode of ['read-only', 'full', 'scoped'] as const) {
      const denied: SandboxSpec = { level: 'process', capabilities: { network: { mode: 'deny' }, filesystem: fs(mode) } };
      assert.match(await run(denied, join(dir, 'svc.sock')), /^refused/, `path socket, filesystem ${mode}`);
      assert.match(await run(denied, name), /^refused/, `abstract socket, filesystem ${mode}`);
    }
    const open: SandboxSpec = { level: 'process', capabilities: { network: { mode: 'allow-all' }, filesystem: fs('read-only') } };
    assert.is(await run(open, join(dir, 'svc.sock')), 'connected', 'control: reachable when the network is not denied');
  } finally {
    path.close();
    abstract.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
