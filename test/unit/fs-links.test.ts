// A peer sharing only the fs transport's directory is untrusted (docs/security.md): its symlinks, FIFOs and
// devices never make the agent read a host file, write outside the directory, or stall.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createFsTransport } from '../../src/transports/fs/transport.ts';
import { resolveFsOptions } from '../../src/transports/fs/options.ts';
import { writeAtomic } from '../../src/transports/fs/layout.ts';
import type { InboundFrame, Transport } from '../../src/kernel/ports.ts';
import { captureLogger, until } from './helpers/fakes.ts';
import { echo } from './transport-contract.ts';
import { systemClock } from '../../src/node/clock.ts';

const cleanup: (() => unknown)[] = [];
test.after.each(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** An IPC directory and a "host" directory outside it holding a secret file. */
function setup() {
  const base = mkdtempSync(`${tmpdir()}/claw-fslinks-`);
  cleanup.push(() => rmSync(base, { recursive: true, force: true }));
  const dir = `${base}/ipc`;
  const host = `${base}/host`;
  mkdirSync(host);
  writeFileSync(`${host}/secret.json`, '{"jsonrpc":"2.0","id":"HOSTID","method":"claw.status","secret":"TOPSECRET"}');
  for (const sub of ['inbox', 'outbox', 'rejected', 'archive', 'notifications', '.state/processing', '.state/answered']) mkdirSync(`${dir}/${sub}`, { recursive: true });
  const frames: InboundFrame[] = [];
  const log = captureLogger();
  const t = createFsTransport({ dir, clock: systemClock, options: resolveFsOptions({ poll_interval_ms: 20, fsync: false, processed: 'archive' }), log, maxFrameBytes: 4096 });
  cleanup.push(() => t.close());
  return { dir, host, frames, log, t, start: () => t.start((f) => (frames.push(f), echo(f))) };
}
const T = String(BigInt(Date.now()) * 1_000_000n).slice(0, 16);
const req = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id, method: 'm', ...extra });
/** Every byte the agent wrote anywhere under `dir`, as text. */
const everything = (dir: string): string =>
  readdirSync(dir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? everything(`${dir}/${e.name}`) : e.isFile() ? readFileSync(`${dir}/${e.name}`, 'utf8') : ''))
    .join('\n');
const replyIn = async (dir: string, rid: string) => {
  await until(() => existsSync(dir) && readdirSync(dir).some((n) => n.endsWith(`-${rid}.json`)), 3000);
  return JSON.parse(readFileSync(`${dir}/${readdirSync(dir).find((n) => n.endsWith(`-${rid}.json`))}`, 'utf8'));
};
const hostUntouched = (host: string) => {
  assert.equal(readdirSync(host), ['secret.json']);
  assert.ok(readFileSync(`${host}/secret.json`, 'utf8').includes('TOPSECRET'));
};

test('a temporary file is created fresh under a random name: a planted {name}.tmp symlink is not written through', () => {
  const s = setup();
  symlinkSync(`${s.host}/secret.json`, `${s.dir}/.state/answered/r1.json.tmp`);
  writeAtomic(`${s.dir}/.state/answered`, 'r1.json', '{"x":1}', false);
  hostUntouched(s.host);
  assert.is(readFileSync(`${s.dir}/.state/answered/r1.json`, 'utf8'), '{"x":1}');
});

test('a symlinked reply_to directory is never written into', async () => {
  const s = setup();
  symlinkSync(s.host, `${s.dir}/outbox/evil`);
  s.start();
  writeFileSync(`${s.dir}/inbox/${T}001-r2.json`, req('a', { reply_to: 'evil' }));
  const reply = await replyIn(`${s.dir}/outbox`, 'r2'); // set aside into outbox/ itself, the request answered
  assert.is(reply.id, 'a');
  await until(() => readdirSync(`${s.dir}/archive`).length === 1, 3000);
  hostUntouched(s.host);
});

test('a symlinked rejected/ (or archive/) never receives a request file', async () => {
  const s = setup();
  s.start(); // with a real rejected/; then the peer swaps it for a link
  rmSync(`${s.dir}/rejected`, { recursive: true });
  symlinkSync(s.host, `${s.dir}/rejected`);
  writeFileSync(`${s.dir}/inbox/${T}002-r3.json`, 'not json');
  writeFileSync(`${s.dir}/inbox/badname.json`, 'x');
  await until(() => s.log.entries.some((e) => e.msg.includes('cannot retire')), 3000);
  hostUntouched(s.host);
});

test('a state directory that is a symlink stops the transport from starting', () => {
  const s = setup();
  rmSync(`${s.dir}/.state/answered`, { recursive: true });
  symlinkSync(s.host, `${s.dir}/.state/answered`);
  assert.throws(() => s.start(), /not a directory/);
});

test('a request symlinked to a host file is refused unread: nothing of it in any reply, file or log', async () => {
  const s = setup();
  s.start();
  symlinkSync(`${s.host}/secret.json`, `${s.dir}/inbox/${T}003-r4.json`);
  const reply = await replyIn(`${s.dir}/outbox`, 'r4');
  assert.is(reply.error.code, -32600);
  assert.is(reply.id, null);
  assert.is(s.frames.length, 0, 'never delivered');
  await until(() => readdirSync(`${s.dir}/rejected`).length === 1, 3000);
  const seen = everything(s.dir) + s.log.text();
  assert.not.ok(/TOPSECRET|HOSTID/.test(seen));
  hostUntouched(s.host);
});

test('a FIFO request is refused at once and the transport keeps serving; recovery does not block on one', async () => {
  const s = setup();
  execFileSync('mkfifo', [`${s.dir}/.state/processing/${T}004-f0.json`]);
  s.start(); // the recovery pass would block here forever on a FIFO
  execFileSync('mkfifo', [`${s.dir}/inbox/${T}005-f1.json`]);
  await replyIn(`${s.dir}/outbox`, 'f1');
  writeFileSync(`${s.dir}/inbox/${T}006-ok.json`, req('ok'));
  const reply = await replyIn(`${s.dir}/outbox`, 'ok');
  assert.is(reply.result.method, 'm');
  await replyIn(`${s.dir}/outbox`, 'f0');
});

test('a symlink to /dev/zero is refused without reading it', async () => {
  const s = setup();
  s.start();
  symlinkSync('/dev/zero', `${s.dir}/inbox/${T}007-z.json`);
  const reply = await replyIn(`${s.dir}/outbox`, 'z');
  assert.is(reply.error.code, -32600);
});

test('a directory named like a request is answered and set aside, not left in processing/', async () => {
  const s = setup();
  s.start();
  mkdirSync(`${s.dir}/x`);
  renameSync(`${s.dir}/x`, `${s.dir}/inbox/${T}008-d.json`);
  await replyIn(`${s.dir}/outbox`, 'd');
  await until(() => readdirSync(`${s.dir}/.state/processing`).length === 0, 3000);
});

test.run();
