// Network deadlines follow what the caller allows (docs/transports.md "claw send", "MQTT"): a broker whose
// CONNACK takes longer than the transport's 10 s default — a slow board on a slow link — is reached by
// `claw send --timeout` long enough to cover it, and by an agent whose claw.runtime.yaml raises
// `connect_timeout_ms`; a short --timeout gives up at once instead of waiting the default out.
// The slow link is a TCP proxy in front of mosquitto that holds the broker's first bytes back.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAW, ROOT } from './helpers/claw-process.ts';
import { findMosquitto, startMosquitto, type Mosquitto } from '../helpers/mosquitto.ts';

const HAVE = findMosquitto() !== undefined;
if (!HAVE) console.log('  (skipped: mosquitto not found; scripts/test-deps.sh installs it)');
const when = (c: boolean) => (c ? test : test.skip);

/** More than the 10 s default connect deadline, so only a deadline that scales gets through. */
const CONNACK_DELAY_MS = 11_500;

/** A proxy that forwards the client's bytes at once and the broker's only `delayMs` after the client connected. */
async function slowLink(brokerPort: number, delayMs: number): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    const upstream = createConnection({ host: '127.0.0.1', port: brokerPort });
    sockets.add(upstream);
    const held: Buffer[] = [];
    let open = false;
    const timer = setTimeout(() => {
      open = true;
      for (const b of held.splice(0)) client.write(b);
    }, delayMs);
    client.on('data', (b) => upstream.write(b));
    upstream.on('data', (b) => (open ? client.write(b) : held.push(b)));
    const end = () => {
      clearTimeout(timer);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    close: () => new Promise((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    }),
  };
}

const children: ChildProcess[] = [];

function run(args: string[], cwd = ROOT): { child: ChildProcess; stderr: () => string; done: Promise<{ code: number | null; ms: number }> } {
  const t0 = Date.now();
  const child = spawn(process.execPath, [CLAW, ...args], { cwd, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  child.stdout!.resume();
  return { child, stderr: () => err, done: new Promise((r) => child.on('exit', (code) => r({ code, ms: Date.now() - t0 }))) };
}

let broker: Mosquitto | undefined;
let link: Awaited<ReturnType<typeof slowLink>> | undefined;
const dir = mkdtempSync(join(tmpdir(), 'claw-deadline-'));

test.after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await link?.close();
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
});

when(HAVE)('a CONNACK slower than 10 s: a long --timeout and connect_timeout_ms get through, a short --timeout gives up early', async () => {
  broker = await startMosquitto();
  link = await slowLink(broker.port, CONNACK_DELAY_MS);
  const url = `mqtt://127.0.0.1:${link.port}/slow/nobody`;
  // Nobody listens at /slow/nobody: exit 3 (connected, no reply in time) tells a connection that got through
  // from exit 4 (no connection), without an agent behind the link.
  const patient = run(['send', url, 'claw.status', '--timeout', String(CONNACK_DELAY_MS + 3000)]);
  const hasty = run(['send', url, 'claw.status', '--timeout', '1500']);
  // The agent side: the same slow link, with connect_timeout_ms raised in claw.runtime.yaml.
  copyFileSync(join(ROOT, 'examples/minimal/claw.yaml'), join(dir, 'claw.yaml'));
  writeFileSync(join(dir, 'claw.runtime.yaml'), `data_dir: ./data\ntransports:\n  - listen: mqtt://127.0.0.1:${link.port}/slow/agent\n    mqtt: { connect_timeout_ms: ${CONNACK_DELAY_MS + 5000} }\n`);
  const agent = run(['run', join(dir, 'claw.yaml'), '--listen', `mqtt://127.0.0.1:${link.port}/slow/agent`], dir);

  const h = await hasty.done;
  assert.is(h.code, 4, hasty.stderr());
  assert.ok(h.ms < 6000, `a 1.5 s --timeout gave up after ${h.ms} ms`);
  const p = await patient.done;
  assert.is(p.code, 3, `connected and waited for a reply: ${patient.stderr()}`);
  assert.ok(p.ms >= CONNACK_DELAY_MS, `${p.ms} ms`);

  const until = Date.now() + 10_000;
  while (!agent.stderr().includes('"mqtt connected"') && Date.now() < until && agent.child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
  assert.match(agent.stderr(), '"mqtt connected"', agent.stderr().slice(-1500));
  assert.not.match(agent.stderr(), 'mqtt connection error', 'the first attempt was not cut off');
  agent.child.kill('SIGTERM');
  await agent.done;
});

test.run();
