// The filesystem transport end to end: `claw run --listen fs:` / `transports:` as a daemon with
// stdin at EOF, driven by `claw send` processes (docs/transports.md).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { CLAW, startClaw } from './helpers/claw-process.ts';
import { agentDir, countCall, daemon, initialize, TOKEN_ENV } from './fs-agent.ts';

function send(args: string[], cwd = '/'): Promise<{ code: number | null; out: any; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLAW, 'send', ...args], { cwd, env: { PATH: process.env.PATH ?? '' } });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('exit', (code) => {
      let out: any;
      try {
        out = JSON.parse(stdout);
      } catch {}
      resolve({ code, out, stdout, stderr });
    });
  });
}
const waitFor = async (cond: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

test('claw run --listen fs:DIR with stdin at EOF keeps serving; claw send drives a session; SIGTERM ends it', async () => {
  const dir = agentDir('heartbeat: { interval_ms: 100 }\n');
  const ipc = join(dir, 'ipc');
  const d = daemon(dir, ['--listen', `fs:${ipc}`]);
  try {
    await waitFor(() => existsSync(join(ipc, 'inbox')));
    const init = await send([`fs:${ipc}`, 'claw.initialize', JSON.stringify(initialize()), '--request-id', 'init-1', '--id', '1']);
    assert.is(init.code, 0, init.stderr);
    assert.equal(init.out.id, 1);
    assert.is(init.out.result.conformanceLevel, 'level-2');
    const call = await send([`fs:${ipc}`, 'claw.tool.call', JSON.stringify(countCall('t1'))]);
    assert.is(call.code, 0, call.stderr);
    assert.equal(call.out.result.content, [{ type: 'text', text: 'counted t1\n' }]);
    assert.match(call.out.id, /^[0-9a-f-]{36}$/, 'the JSON-RPC id defaults to the request_id (a UUID)');
    // Resending an answered request_id: the stored reply, no second execution.
    const again1 = await send([`fs:${ipc}`, 'claw.tool.call', JSON.stringify(countCall('t2')), '--request-id', 'r-t2']);
    const again2 = await send([`fs:${ipc}`, 'claw.tool.call', JSON.stringify(countCall('t2')), '--request-id', 'r-t2']);
    assert.equal(again2.out, again1.out);
    assert.is(readFileSync(join(dir, 'count.log'), 'utf8'), 't1\nt2\n');
    // An error reply exits 1 and is printed.
    const bad = await send([`fs:${ipc}`, 'claw.nope', '{}']);
    assert.is(bad.code, 1);
    assert.is(bad.out.error.code, -32601);
    // Heartbeats go to notifications/.
    await waitFor(() => readdirSync(join(ipc, 'notifications')).length >= 2);
    const first = readdirSync(join(ipc, 'notifications')).sort()[0];
    assert.is(JSON.parse(readFileSync(join(ipc, 'notifications', first), 'utf8')).method, 'claw.heartbeat');
    assert.ok(d.stderr().includes('stdin closed; still serving'));
    d.child.kill('SIGTERM');
    assert.is(await d.exited, 0);
    assert.equal(readdirSync(join(ipc, 'inbox')), []);
    assert.equal(readdirSync(join(ipc, '.state', 'processing')), []);
  } finally {
    d.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

// Issue 5: several --listen alongside stdio. One process, stdio live plus two fs directories: one session
// (initialized over stdio) that all three reach; each reply goes back through the transport its request came in by.
test('two --listen fs: directories alongside a live stdio: one session, every transport answered on its own path', async () => {
  const dir = agentDir();
  const a = join(dir, 'ipc-a');
  const b = join(dir, 'ipc-b');
  const c = startClaw(['run', join(dir, 'claw.yaml'), '--listen', `fs:${a}`, '--listen', `fs:${b}`], { cwd: dir, env: TOKEN_ENV });
  try {
    const init = await c.request('claw.initialize', initialize(), 'init');
    assert.is(init.result?.conformanceLevel, 'level-2', JSON.stringify(init));
    await waitFor(() => existsSync(join(a, 'inbox')) && existsSync(join(b, 'inbox')));
    const viaA = await send([`fs:${a}`, 'claw.tool.call', JSON.stringify(countCall('via-a'))]);
    const viaB = await send([`fs:${b}`, 'claw.tool.call', JSON.stringify(countCall('via-b'))]);
    assert.equal([viaA.code, viaA.out?.result?.content], [0, [{ type: 'text', text: 'counted via-a\n' }]], viaA.stderr);
    assert.equal([viaB.code, viaB.out?.result?.content], [0, [{ type: 'text', text: 'counted via-b\n' }]], viaB.stderr);
    const viaStdio = await c.request('claw.tool.call', countCall('via-stdio'), 'stdio-call');
    assert.equal(viaStdio.result?.content, [{ type: 'text', text: 'counted via-stdio\n' }]);
    // No reply crossed over: stdout carried only the replies to stdio's own requests.
    assert.equal(c.messages.filter((m: any) => 'id' in m).map((m: any) => m.id), ['init', 'stdio-call']);
    assert.is(readFileSync(join(dir, 'count.log'), 'utf8'), 'via-a\nvia-b\nvia-stdio\n');
    // stdin at EOF does not end a process that has other transports; SIGTERM does, cleanly.
    c.child.stdin.end();
    await waitFor(() => c.stderr().includes('stdin closed; still serving'));
    c.child.kill('SIGTERM');
    assert.is((await c.exited).code, 0);
  } finally {
    c.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('transports: in claw.runtime.yaml binds a relative fs: directory against the config file', async () => {
  const dir = agentDir('transports:\n  - listen: fs:ipc-from-config\n    fs: { watch: false, poll_interval_ms: 30 }\n');
  const d = daemon(dir);
  try {
    const ipc = join(dir, 'ipc-from-config');
    await waitFor(() => existsSync(join(ipc, 'inbox')));
    // A relative URI for claw send resolves against its working directory.
    const r = await send(['fs:ipc-from-config', 'claw.status'], dir);
    assert.is(r.code, 1);
    assert.is(r.out.error.data.state, 'INIT');
  } finally {
    d.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a daemon whose only other transport goes away (its directory removed) exits 0', async () => {
  const dir = agentDir();
  const ipc = join(dir, 'ipc');
  const d = daemon(dir, ['--listen', `fs:${ipc}`]);
  try {
    await waitFor(() => existsSync(join(ipc, 'inbox')));
    // The daemon may still be creating its other directories (slowly, on a loaded machine): a removal racing it
    // gets ENOTEMPTY, so retry for a while.
    await waitFor(() => {
      try {
        rmSync(ipc, { recursive: true, force: true });
        return true;
      } catch {
        return false;
      }
    });
    assert.is(await d.exited, 0);
    assert.ok(d.stderr().includes('"reason":"all transports closed"'), d.stderr().slice(-500));
  } finally {
    d.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('claw send exit codes: 2 usage, 3 no reply in time, 4 nothing listening', async () => {
  const dir = agentDir();
  try {
    const usage = await send(['fs:/x', 'm', 'not json']);
    assert.is(usage.code, 2);
    assert.match(usage.stderr, 'params is not JSON');
    assert.is((await send(['bogus:/x', 'm'])).code, 2);
    assert.is((await send(['fs:/x'])).code, 2);
    const none = await send([`fs:${join(dir, 'nobody')}`, 'claw.status']);
    assert.is(none.code, 4);
    assert.match(none.stderr, 'no agent listens');
    mkdirSync(join(dir, 'silent', 'inbox'), { recursive: true });
    const slow = await send([`fs:${join(dir, 'silent')}`, 'claw.status', '--timeout', '200']);
    assert.is(slow.code, 3);
    assert.match(slow.stderr, 'within 200 ms');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('claw run --listen with an unknown scheme is a usage error (exit 2)', async () => {
  const dir = agentDir();
  try {
    const d = daemon(dir, ['--listen', 'carrier-pigeon:/coop']);
    assert.is(await d.exited, 2);
    assert.match(d.stderr(), 'unknown transport scheme');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
