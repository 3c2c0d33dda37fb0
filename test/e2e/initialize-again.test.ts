// A claw.initialize while a session is READY (docs/protocol.md "Lifecycle"): checked like a first one (-32602 bad
// params, -32001 another major with data.supported), then refused for the state (-32600, data.state READY), on
// every transport (stdio, HTTP, fs, MQTT). On fs and MQTT the first initialize's request_id, resent, gets its stored reply; a refusal is
// not stored, so the same request_id sent again after a shutdown opens the new session.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CLAW, initParams } from './helpers/claw-process.ts';
import { assertError, initialize, transitions, withClaw } from './helpers/e2e-util.ts';
import { agentDir, AGENT, TOKEN_ENV } from './fs-agent.ts';
import { findMosquitto, startMosquitto, type Mosquitto } from '../helpers/mosquitto.ts';
import { request, startHttpClaw } from './helpers/http-claw.ts';

const HAVE_MOSQUITTO = findMosquitto() !== undefined;
if (!HAVE_MOSQUITTO) console.log('SKIP initialize-again over MQTT: mosquitto not found (scripts/test-deps.sh installs it)');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const children: ChildProcess[] = [];
let broker: Mosquitto | undefined;
test.after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await broker?.stop();
});

test('stdio: a repeated initialize gets -32001 / -32602 for what is wrong with it, -32600 READY when it is valid', async () => {
  await withClaw(['run'], async (c) => {
    await initialize(c);
    assertError(await c.request('claw.initialize', initParams({ protocolVersion: '1.0.0' }), 'future'), 'future', -32001, { supported: ['0.3.0', '0.2.0'] });
    const bad = await c.request('claw.initialize', { ...initParams(), clientInfo: 'x' }, 'bad');
    assert.is(bad.error.code, -32602);
    assert.equal(bad.error.data.issues.map((i: { path: string }) => i.path), ['clientInfo']);
    assertError(await c.request('claw.initialize', initParams(), 'again'), 'again', -32600, { state: 'READY' });
    assert.is((await c.request('claw.status', {}, 's')).result.state, 'READY');
    assert.equal(transitions(c.stderr()), [
      ['INIT', 'STARTING'],
      ['STARTING', 'READY'],
    ]);
  });
});

test('HTTP transport: the same replies, in the POST responses', async () => {
  const h = await startHttpClaw('transports:\n  - listen: http://127.0.0.1:0/ckp\n');
  const post = async (id: string, params: unknown) => (await request(h.url, { body: JSON.stringify({ jsonrpc: '2.0', id, method: 'claw.initialize', params }) })).json;
  try {
    assert.ok((await post('i1', initParams())).result);
    assertError(await post('i2', initParams({ protocolVersion: '1.0.0' })), 'i2', -32001, { supported: ['0.3.0', '0.2.0'] });
    assert.is((await post('i3', { ...initParams(), clientInfo: 'x' })).error.code, -32602);
    assertError(await post('i4', initParams()), 'i4', -32600, { state: 'READY' });
    assert.equal(transitions(h.c.stderr()), [
      ['INIT', 'STARTING'],
      ['STARTING', 'READY'],
    ]);
  } finally {
    await h.stop();
  }
});

/** `claw run claw.yaml --listen <url>` with stdin at EOF; resolves once `ready()` says the transport is up. */
async function daemon(dir: string, url: string, ready: (stderr: string) => boolean): Promise<{ child: ChildProcess; stderr: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [CLAW, 'run', join(dir, 'claw.yaml'), '--listen', url], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...TOKEN_ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  child.stdout!.resume();
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const until = Date.now() + 10_000;
  while (!ready(err)) {
    if (child.exitCode !== null || Date.now() > until) throw new Error(`agent not listening: ${err.slice(-1500)}`);
    await sleep(20);
  }
  return { child, stderr: () => err, exited };
}

/** `claw send <url> <method> <params> --request-id <rid>`: the parsed reply. */
function send(url: string, method: string, params: unknown, rid: string): Promise<any> {
  const child = spawn(process.execPath, [CLAW, 'send', url, method, JSON.stringify(params), '--request-id', rid, '--id', rid, '--timeout', '20000'], { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  return new Promise((resolve, reject) =>
    child.on('exit', () => {
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? ''));
      } catch {
        reject(new Error(`no reply to ${method} (${rid}): ${err.slice(-800)}`));
      }
    }),
  );
}

/** The same sequence on a transport with request_ids (fs, MQTT). */
async function scenario(url: string, stderr: () => string): Promise<void> {
  const first = await send(url, 'claw.initialize', initParams(), 'init-1');
  assert.is(first.result?.agentInfo?.name, AGENT, JSON.stringify(first));
  // The first initialize's request_id again (its reply was lost, say): the stored reply, not a refusal.
  assert.equal(await send(url, 'claw.initialize', initParams(), 'init-1'), first);
  assertError(await send(url, 'claw.initialize', initParams({ protocolVersion: '1.0.0' }), 'init-2'), 'init-2', -32001, { supported: ['0.3.0', '0.2.0'] });
  const bad = await send(url, 'claw.initialize', { ...initParams(), capabilities: 7 }, 'init-3');
  assert.is(bad.error?.code, -32602, JSON.stringify(bad));
  assertError(await send(url, 'claw.initialize', initParams(), 'init-4'), 'init-4', -32600, { state: 'READY' });
  assert.equal((await send(url, 'claw.shutdown', {}, 'down')).result, { drained: true });
  // The refusal was not init-4's answer: sent again after the shutdown, it opens the next session.
  const next = await send(url, 'claw.initialize', initParams(), 'init-4');
  assert.is(next.result?.agentInfo?.name, AGENT, JSON.stringify(next));
  assert.is(stderr().split('"from":"STARTING","to":"READY"').length - 1, 2, 'two sessions, no more');
}

test('fs transport: the same rule; a refused request_id is not stored', async () => {
  const dir = agentDir();
  const ipc = join(dir, 'ipc');
  const d = await daemon(dir, `fs:${ipc}`, () => existsSync(join(ipc, 'inbox')));
  try {
    await scenario(`fs:${ipc}`, d.stderr);
  } finally {
    d.child.kill('SIGTERM');
    await d.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});

(HAVE_MOSQUITTO ? test : test.skip)('MQTT transport: the same rule; a refused request_id is not stored', async () => {
  broker ??= await startMosquitto();
  const dir = agentDir();
  const url = broker.url(`/init-again/${AGENT}`);
  const d = await daemon(dir, url, (err) => err.includes('"mqtt connected"'));
  try {
    await scenario(url, d.stderr);
  } finally {
    d.child.kill('SIGTERM');
    await d.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
