// The same dist/claw.mjs on every target of scripts/xarch/matrix.json: official Node 22 and 20 for
// arm64, Node 20 for armv7l, Debian's Node for riscv64 (all under qemu-user, loading their C
// libraries from a Debian sysroot with -L), and Bun on x64 and arm64. scripts/xarch/fetch.mjs (run by
// scripts/install-runtimes.sh) puts them in .build/xarch. Each runtime runs the smoke set: --version,
// validate, a Level 3 session over stdio (initialize, a builtin, an exec tool in the process sandbox,
// 100 memory stores, a query), a round trip over the fs transport and over MQTT through mosquitto
// (the runtime under test on both ends), and `claw chat` answering from the offline rules.
// Pass/fail only: emulation is 10–30× slower than the host, so nothing here measures time, and every
// deadline is generous. A runtime that is missing fails, with the reason the fetch recorded;
// CLAW_XARCH_SKIP=1 (or a comma list of names) skips, for a local run without network.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAW, ROOT, initParams } from './helpers/claw-process.ts';
import { findMosquitto, startMosquitto, type Mosquitto } from '../helpers/mosquitto.ts';
import { layout, skipped } from '../../scripts/xarch/layout.mjs';

interface MatrixRuntime { name: string; qemu?: string; sysroot?: string; npm?: string; bin?: string; local?: string }
const matrix: { runtimes: MatrixRuntime[] } = JSON.parse(readFileSync(join(ROOT, 'scripts/xarch/matrix.json'), 'utf8'));
const L = layout(ROOT);
const skip = skipped(process.env.CLAW_XARCH_SKIP);
/** Per process: a cold start of the bundle under qemu takes seconds, more on a loaded machine. */
const DEADLINE_MS = 240_000;
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
const ENV = { PATH: process.env.PATH ?? '', CLI_TOKEN: 'xarch-cli-token' };

function onPath(name: string): string | undefined {
  for (const d of (process.env.PATH ?? '').split(':')) if (d && existsSync(join(d, name))) return join(d, name);
  return undefined;
}

/** The command that runs the bundle on `r`, or why it cannot. */
function command(r: MatrixRuntime): { argv: string[] } | { missing: string } {
  const fetchError = join(L.errors, `${r.name}.txt`);
  const why = existsSync(fetchError) ? ` (fetch failed: ${readFileSync(fetchError, 'utf8').trim().slice(0, 800)})` : '';
  if (r.local) {
    const bin = join(ROOT, r.local);
    return existsSync(bin) ? { argv: [bin] } : { missing: `${bin} is missing: bash scripts/install-runtimes.sh installs it` };
  }
  const qemu = onPath(`qemu-${r.qemu}-static`) ?? onPath(`qemu-${r.qemu}`);
  if (!qemu) return { missing: `qemu-${r.qemu}(-static) is not installed: bash scripts/test-deps.sh installs qemu-user-static` };
  const sysroot = L.sysroot(r.sysroot!);
  const bin = join(r.npm ? L.npm(r.npm) : sysroot, r.bin!);
  if (!existsSync(join(sysroot, '.complete')) || !existsSync(bin)) {
    return { missing: `${r.name} is not in .build/xarch: node scripts/xarch/fetch.mjs fetches it${why}` };
  }
  return { argv: [qemu, '-L', sysroot, bin] };
}

const children: ChildProcess[] = [];
const dirs: string[] = [];
let broker: Mosquitto | undefined;

interface Exit { code: number | null; stdout: string; stderr: string }
/** Run the bundle on the runtime to completion, stdin from `input`. */
function claw(argv: string[], args: string[], opts: { cwd?: string; input?: string } = {}): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(argv[0], [...argv.slice(1), CLAW, ...args], { cwd: opts.cwd ?? ROOT, env: ENV });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), DEADLINE_MS);
    child.on('exit', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })));
    child.stdin.end(opts.input ?? '');
  });
}
const lastJson = (text: string) => {
  try {
    return JSON.parse(text.trim().split('\n').pop() ?? '');
  } catch {
    return undefined;
  }
};

/** Level 3 (all nine core primitives, as TV-L3-01): a builtin, an exec tool in the process sandbox, a conversation store. */
const MANIFEST = `claw: "0.3.0"
kind: Claw
metadata:
  name: "xarch"
  version: "1.0.0"
spec:
  identity:
    inline:
      personality: "Proves the bundle on another architecture."
      autonomy: "autonomous"
  providers:
    - inline:
        protocol: "openai-compatible"
        endpoint: "http://127.0.0.1:9/v1"
        model: "none"
        auth: { type: "none" }
  channels:
    - inline: { type: "cli", transport: "stdio", auth: { secret_ref: "CLI_TOKEN" } }
  tools:
    - inline:
        name: "echo"
        description: "builtin"
        input_schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
    - inline:
        name: "hello"
        description: "exec tool"
        input_schema: { type: "object", properties: { who: { type: "string" } }, required: ["who"] }
  skills:
    - inline:
        name: "greet"
        description: "Greets"
        tools_required: ["hello"]
        instruction: "Greet with hello."
  memory:
    inline:
      stores:
        - name: "context"
          type: "conversation"
          backend: "sqlite"
  sandbox:
    inline:
      level: "process"
  policies:
    - inline:
        rules:
          - { id: "allow-all", action: "allow", scope: "all" }
  swarm:
    inline:
      topology: "peer-to-peer"
      agents:
        - { identity_ref: "xarch", role: "peer" }
      coordination: { message_passing: "direct", backend: "in-process", concurrency: { max_parallel: 2 } }
      aggregation: { strategy: "merge" }
`;

const rpc = (id: number | string, method: string, params: unknown) => ({ jsonrpc: '2.0', id, method, params });
const toolCall = (name: string, args: unknown, requestId: string) => ({ name, arguments: args, context: { request_id: requestId, identity: 'xarch' } });
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const STORES = 100;

/**
 * One `claw run` serving stdio, an fs directory and an MQTT topic at once: the Level 3 session over
 * stdio, then one `claw send` over each transport, on the same runtime, reaching the same session.
 */
async function serve(argv: string[], name: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `claw-xarch-${name}-`));
  dirs.push(dir);
  writeFileSync(join(dir, 'claw.yaml'), MANIFEST);
  writeFileSync(join(dir, 'claw.runtime.yaml'), 'data_dir: ./data\ntools:\n  echo: { builtin: echo }\n  hello:\n    exec: { bin: /bin/echo, argv: ["hi", "{{who}}"] }\n');
  const ipc = join(dir, 'ipc');
  const mqtt = broker!.url(`/xarch-${name}/xarch`);
  const child = spawn(argv[0], [...argv.slice(1), CLAW, 'run', join(dir, 'claw.yaml'), '--listen', `fs:${ipc}`, '--listen', mqtt, '--log-level', 'info'], { cwd: dir, env: ENV });
  children.push(child);
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const replies = new Map<unknown, any>();
  const garbage: string[] = [];
  let buf = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    buf += c;
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        const m = JSON.parse(line);
        replies.set(m.id, m);
      } catch {
        garbage.push(line);
      }
    }
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const until = async (what: string, cond: () => boolean) => {
    const end = Date.now() + DEADLINE_MS;
    while (!cond()) {
      if (child.exitCode !== null || Date.now() > end) throw new Error(`${name}: no ${what}; stderr: ${err.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const send = (line: object) => child.stdin.write(`${JSON.stringify(line)}\n`);
  try {
    send(rpc(1, 'claw.initialize', initParams()));
    await until('initialize reply', () => replies.has(1));
    assert.is(replies.get(1)?.result?.conformanceLevel, 'level-3', JSON.stringify(replies.get(1)));
    // The other transports reach the same session, while stdio is busy with the stores; the sender is
    // the runtime under test too.
    await until('fs inbox', () => existsSync(join(ipc, 'inbox')));
    await until('MQTT connection', () => err.includes('"mqtt connected"'));
    const sends = Promise.all([
      claw(argv, ['send', `fs:${ipc}`, 'claw.tool.call', JSON.stringify(toolCall('hello', { who: 'fs' }, uuid(5))), '--timeout', String(DEADLINE_MS)]),
      claw(argv, ['send', mqtt, 'claw.tool.call', JSON.stringify(toolCall('hello', { who: 'mqtt' }, uuid(6))), '--timeout', String(DEADLINE_MS)]),
    ]);
    send(rpc(2, 'claw.tool.call', toolCall('echo', { text: 'same everywhere' }, uuid(2))));
    send(rpc(3, 'claw.tool.call', toolCall('hello', { who: 'board' }, uuid(3))));
    for (let i = 0; i < STORES; i++) {
      const content = i === 42 ? 'Project deadline is March 15' : `garden note ${i}: the tomatoes need water`;
      send(rpc(100 + i, 'claw.memory.store', { store: 'context', entries: [{ content }], context: { request_id: uuid(100 + i) } }));
    }
    // Replies come in completion order: the exec tool may answer after the stores.
    const sent = [2, 3, ...Array.from({ length: STORES }, (_, i) => 100 + i)];
    await until('replies to the tools and the stores', () => sent.every((id) => replies.has(id)));
    send(rpc(4, 'claw.memory.query', { store: 'context', query: { type: 'semantic', text: 'deadline' } }));
    await until('query reply', () => replies.has(4));
    assert.equal(replies.get(2)?.result, { content: [{ type: 'text', text: 'same everywhere' }] }, JSON.stringify(replies.get(2)));
    assert.equal(replies.get(3)?.result, { content: [{ type: 'text', text: 'hi board\n' }] }, JSON.stringify(replies.get(3)));
    const ids = new Set<string>();
    for (let i = 0; i < STORES; i++) {
      const r = replies.get(100 + i);
      assert.ok(r?.result?.ids?.length === 1, `store ${i}: ${JSON.stringify(r)}`);
      ids.add(r.result.ids[0]);
    }
    assert.is(ids.size, STORES, 'every store got its own entry id');
    // The exec tool ran inside bubblewrap, launched by the emulated runtime (bwrap itself is the host's).
    const sandbox = err.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((l) => l.msg === 'sandbox' && l.tool === 'hello');
    assert.match(sandbox?.note ?? '', /^bubblewrap: /, JSON.stringify(sandbox));
    const found = replies.get(4)?.result?.entries;
    assert.is(found?.[0]?.content, 'Project deadline is March 15', JSON.stringify(replies.get(4)));
    assert.is(found[0].id, replies.get(142).result.ids[0]);

    const [viaFs, viaMqtt] = await sends;
    assert.is(viaFs.code, 0, `fs send: ${viaFs.stderr.slice(-1500)}`);
    assert.equal(lastJson(viaFs.stdout)?.result, { content: [{ type: 'text', text: 'hi fs\n' }] }, viaFs.stdout);
    assert.is(viaMqtt.code, 0, `mqtt send: ${viaMqtt.stderr.slice(-1500)}`);
    assert.equal(lastJson(viaMqtt.stdout)?.result, { content: [{ type: 'text', text: 'hi mqtt\n' }] }, viaMqtt.stdout);

    child.kill('SIGTERM');
    assert.is(await exited, 0, err.slice(-2000));
    assert.equal(garbage, [], 'stdout carries protocol messages only');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/** `claw chat` on a fresh copy of examples/chat, nothing listening for the model: the offline rules answer. */
async function chat(argv: string[], name: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `claw-xarch-chat-${name}-`));
  dirs.push(dir);
  const example = join(ROOT, 'examples', 'chat');
  for (const f of readdirSync(example, { withFileTypes: true })) if (f.isFile()) copyFileSync(join(example, f.name), join(dir, f.name));
  const r = await claw(argv, ['chat', 'claw.yaml'], { cwd: dir, input: 'hello\necho something\n' });
  assert.is(r.code, 0, r.stderr.slice(-2000));
  assert.is(r.stdout, "Hello! No language model is reachable, so I answer from my offline rules. Try 'echo <text>' or 'note <topic>: <text>'.\nDone: something\n", r.stderr.slice(-2000));
}

test.before(async () => {
  if (matrix.runtimes.every((r) => skip(r.name))) return;
  if (!findMosquitto()) throw new Error('mosquitto is not installed: bash scripts/test-deps.sh installs it');
  broker = await startMosquitto();
});
test.after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await broker?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

for (const r of matrix.runtimes) {
  if (skip(r.name)) {
    console.log(`SKIP xarch ${r.name}: CLAW_XARCH_SKIP=${process.env.CLAW_XARCH_SKIP}`);
    continue;
  }
  test(`${r.name}: --version, validate, a Level 3 session, fs and MQTT round trips, claw chat offline`, async () => {
    const cmd = command(r);
    if ('missing' in cmd) assert.unreachable(cmd.missing);
    const { argv } = cmd as { argv: string[] };
    const [version, validate] = await Promise.all([
      claw(argv, ['--version']),
      claw(argv, ['validate', 'examples/home-agent/claw.yaml', '--json']),
      serve(argv, r.name),
      chat(argv, r.name),
    ]);
    assert.is(version.code, 0, version.stderr);
    assert.ok(version.stdout.startsWith(`claw-edge ${VERSION} `), version.stdout);
    assert.is(validate.code, 0, validate.stderr.slice(-2000));
    assert.is(JSON.parse(validate.stdout).valid, true, validate.stdout);
  });
}

test.run();
