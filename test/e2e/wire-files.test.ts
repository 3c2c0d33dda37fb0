// A manifest sent over the wire cannot make the runtime read the host's files (docs/manifest.md "Manifests sent
// over the wire"): devices, FIFOs, paths out of the launch directory and symlinks leading out are refused with
// -32602 at once, over stdio and over the filesystem transport; the process stays small and keeps answering.
// `claw validate` refuses devices and FIFOs in a manifest on disk the same way.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLAW, initParams, startClaw } from './helpers/claw-process.ts';
import { assertCleanStreams, assertError } from './helpers/e2e-util.ts';

const base = mkdtempSync(join(tmpdir(), 'claw-wire-files-'));
const dir = join(base, 'agent');
mkdirSync(dir);
mkdirSync(join(base, 'elsewhere'));
const outsideIdentity = join(base, 'elsewhere', 'identity.yaml');
writeFileSync(outsideIdentity, 'claw: "0.3.0"\nkind: Identity\nmetadata: { name: leaked }\nspec: { personality: "outside-content" }\n');
symlinkSync(outsideIdentity, join(dir, 'escape.yaml'));
execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
writeFileSync(
  join(dir, 'claw.yaml'),
  `claw: "0.3.0"
kind: Claw
metadata: { name: wire-files }
spec:
  identity: { inline: { personality: "p" } }
  providers: [ { inline: { protocol: openai-compatible, endpoint: "http://127.0.0.1:1/v1", model: m, auth: { type: none } } } ]
`,
);

test.after(() => rmSync(base, { recursive: true, force: true }));

/** Each hostile reference, and what its refusal says. */
const HOSTILE: [string, RegExp][] = [
  ['/dev/zero', /"\/dev\/zero" points outside/],
  ['/dev/urandom', /"\/dev\/urandom" points outside/],
  ['pipe.yaml', /pipe\.yaml is not a regular file/],
  ['../../etc/passwd', /"\.\.\/\.\.\/etc\/passwd" points outside/],
  [outsideIdentity, /points outside/],
  ['escape.yaml', /escape\.yaml resolves \(through a symlink\) outside/],
];

const hostileParams = (ref: string) => {
  const p = initParams();
  return { ...p, manifest: { ...p.manifest, spec: { ...p.manifest.spec, identity: ref } } };
};

/** Resident set of a process in MiB (Linux /proc). */
function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return kb ? Number(kb[1]) / 1024 : 0;
}

test('stdio: each hostile reference is refused at once, claw.status answers meanwhile, RSS stays small', async () => {
  const c = startClaw(['run', 'claw.yaml'], { cwd: dir });
  try {
    for (const [i, [ref, said]] of HOSTILE.entries()) {
      const t0 = Date.now();
      // Both sent before either reply: the status must not wait behind a read that never ends.
      const init = c.request('claw.initialize', hostileParams(ref), `init-${i}`);
      const status = c.request('claw.status', {}, `status-${i}`);
      const [r, s] = await Promise.all([init, status]);
      assert.ok(Date.now() - t0 < 4000, `${ref}: answered in ${Date.now() - t0} ms`);
      assertError(r, `init-${i}`, -32602);
      const messages = r.error.data.issues.map((x: any) => x.message).join('\n');
      assert.match(messages, said);
      assert.not.match(JSON.stringify(r), /outside-content|root:x:0/, 'no file content on the wire');
      // Before a session, claw.status answers that the runtime is in INIT (spec §9.3.1): an answer all the same.
      assertError(s, `status-${i}`, -32600, { state: 'INIT' });
      assert.ok(rssMiB(c.child.pid!) < 200, `RSS ${rssMiB(c.child.pid!)} MiB after ${ref}`);
    }
    // And a well-formed initialize still starts the session.
    const ok = await c.request('claw.initialize', initParams(), 'init-ok');
    assert.ok(ok.result, JSON.stringify(ok));
    const st = await c.request('claw.status', {}, 'status-ok');
    assert.ok(st.result, JSON.stringify(st));
    assertCleanStreams(c);
  } finally {
    c.kill();
    await c.exited;
  }
});

function send(ipc: string, method: string, params: unknown): Promise<{ code: number | null; out: any; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLAW, 'send', `fs:${ipc}`, method, JSON.stringify(params)], { cwd: '/', env: { PATH: process.env.PATH ?? '' } });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    const kill = setTimeout(() => c.kill('SIGKILL'), 15_000);
    c.on('exit', (code) => {
      clearTimeout(kill);
      let out: any;
      try {
        out = JSON.parse(stdout);
      } catch {}
      resolve({ code, out, stderr });
    });
  });
}

test('fs transport: the same references are refused, and the daemon keeps answering', async () => {
  const ipc = join(base, 'ipc');
  const d = spawn(process.execPath, [CLAW, 'run', join(dir, 'claw.yaml'), '--listen', `fs:${ipc}`], { cwd: dir, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  d.stderr!.on('data', (c) => (err += c));
  try {
    const end = Date.now() + 10_000;
    while (!existsSync(join(ipc, 'inbox'))) {
      if (Date.now() > end) throw new Error(`no inbox; stderr ${err.slice(-500)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const [ref, said] of HOSTILE) {
      const r = await send(ipc, 'claw.initialize', hostileParams(ref));
      assert.is(r.code, 1, `${ref}: ${r.stderr}`);
      assert.is(r.out?.error?.code, -32602, JSON.stringify(r.out));
      assert.match(r.out.error.data.issues.map((x: any) => x.message).join('\n'), said);
      assert.not.match(JSON.stringify(r.out), /outside-content|root:x:0/);
      assert.ok(rssMiB(d.pid!) < 200, `RSS ${rssMiB(d.pid!)} MiB after ${ref}`);
    }
    const ok = await send(ipc, 'claw.initialize', initParams());
    assert.is(ok.code, 0, ok.stderr);
    const s = await send(ipc, 'claw.status', {});
    assert.is(s.code, 0, s.stderr);
    assert.ok(s.out.result, JSON.stringify(s.out));
  } finally {
    d.kill('SIGKILL');
    await new Promise((r) => d.once('exit', r));
  }
});

test('claw validate: a manifest naming /dev/zero and a FIFO is refused quickly, naming both', () => {
  const file = join(base, 'devices.yaml');
  writeFileSync(file, `claw: "0.3.0"\nkind: Claw\nmetadata: { name: devices }\nspec:\n  identity: /dev/zero\n  providers: [ ${join(dir, 'pipe.yaml')} ]\n`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [CLAW, 'validate', file], { encoding: 'utf8', timeout: 15_000, env: { PATH: process.env.PATH ?? '' } });
  assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
  assert.is(r.status, 1, r.stderr);
  assert.match(r.stderr, /referenced file \/dev\/zero is not a regular file/);
  assert.match(r.stderr, /pipe\.yaml is not a regular file/);
  // The FIFO as the file to validate itself.
  const f = spawnSync(process.execPath, [CLAW, 'validate', join(dir, 'pipe.yaml')], { encoding: 'utf8', timeout: 15_000, env: { PATH: process.env.PATH ?? '' } });
  assert.is(f.status, 1, f.stderr);
  assert.match(f.stderr, /not a regular file/);
});

test.run();
