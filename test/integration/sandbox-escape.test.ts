// Escape attempts against the bubblewrap sandbox, under real bubblewrap (skipped where it does not work): a tool
// that tries to read or write outside what its sandbox grants — the host's /proc and sysctls behind a mount_path
// of `/`, /proc or /dev as mount_paths, a TMPDIR inside data_dir, a racer swapping a mount_path for a symlink
// into data_dir between the check and the bind, descriptors the runtime inherited. docs/security.md
// "Filesystem under bubblewrap" says what each case must do.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { SandboxSpec } from '../../src/manifest/schema/index.ts';
import { skillSandbox } from '../../src/agent/skills.ts';
import { validateMountPaths } from '../../src/manifest/checks/sandbox.ts';
import { detectHost, type HostCapabilities } from '../../src/sandbox/host.ts';
import { checkLevel } from '../../src/sandbox/levels.ts';
import { runSandboxed, type RunOptions, type RunResult } from '../../src/sandbox/runner.ts';
import { drainRunDirs } from '../../src/sandbox/run-dirs.ts';
import { marker, sleep, testHost, without } from '../fixtures/sandbox/helpers.ts';

const baseEnv = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' };
const DB = 'memory-db-content-3c81';
const AUDIT = 'audit-line-9e02';
const KEY = 'secrets-dir-key-77aa';
const CONFIG = 'runtime-config-5b6d';

let real: HostCapabilities;
let dir: string;
let rt: { root: string; data: string; ws: string; secrets: string; config: string };
let host: HostCapabilities;

/** A runtime's own files on disk (data_dir with its memory database and audit log, a secrets dir, the config), as tool-deps.ts declares them. */
function runtimeLayout(root: string) {
  const data = join(root, 'data');
  const ws = join(data, 'workspace');
  const secrets = join(root, 'secrets');
  const config = join(root, 'claw.runtime.yaml');
  mkdirSync(join(data, 'memory'), { recursive: true });
  mkdirSync(join(data, 'audit'), { recursive: true });
  mkdirSync(ws, { recursive: true });
  mkdirSync(secrets, { recursive: true });
  writeFileSync(join(data, 'memory', 'agent.db'), DB);
  writeFileSync(join(data, 'audit', 'audit.jsonl'), AUDIT);
  writeFileSync(join(ws, 'shared.txt'), 'workspace-file');
  writeFileSync(join(secrets, 'OPENAI_API_KEY'), KEY);
  writeFileSync(config, CONFIG);
  return { root, data, ws, secrets, config };
}

const withPrivate = (h: HostCapabilities, r: typeof rt): HostCapabilities => ({ ...h, private: { dirs: [r.secrets, r.data], files: [r.config], shared: [r.ws] } });

test.before(async () => {
  real = testHost(await detectHost());
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'claw-escape-')));
  rt = runtimeLayout(join(dir, 'rt'));
  host = withPrivate(without(real, 'cgroup'), rt);
});

test.after(() => {
  drainRunDirs();
  rmSync(dir, { recursive: true, force: true });
});

const run = (o: Partial<RunOptions> & { argv: string[]; sandbox: SandboxSpec }) => runSandboxed({ bin: 'sh', env: baseEnv, host, graceMs: 300, timeoutMs: 10_000, ...o });
const leaked = (r: RunResult) => [DB, AUDIT, KEY, CONFIG].filter((s) => r.stdout.includes(s) || r.stderr.includes(s));
const skip = (why: string) => console.log(`  (${why}: skipped)`);

const scoped = (...mounts: [string, 'ro' | 'rw'][]): SandboxSpec => ({ level: 'process', capabilities: { filesystem: { mode: 'scoped', mount_paths: mounts.map(([path, permissions]) => ({ path, permissions })) } } });
const mode = (m: 'deny' | 'read-only' | 'full'): SandboxSpec => ({ level: 'process', capabilities: { filesystem: { mode: m } } });

/** Reads every runtime file by its path. */
const readRuntime = () => `cat ${rt.data}/memory/agent.db ${rt.data}/audit/audit.jsonl ${rt.secrets}/OPENAI_API_KEY ${rt.config} 2>/dev/null; echo`;

test('a tool run by root cannot write a sysctl (kernel.core_pattern runs its helper as host root): /proc/sys is read-only in every filesystem mode', async () => {
  if (!host.bwrap.works) return skip('no bubblewrap');
  const work = join(dir, 'sysctl-work');
  mkdirSync(work, { recursive: true });
  const before = readFileSync('/proc/sys/kernel/core_pattern', 'utf8');
  const views: [string, SandboxSpec][] = [
    ['deny', mode('deny')],
    ['scoped', scoped([work, 'rw'])],
    ['scoped with a mount_path of /', scoped(['/', 'ro'], [work, 'rw'])],
    ['read-only', mode('read-only')],
    ['full', mode('full')],
  ];
  for (const [name, sandbox] of views) {
    // Writes back the value it read: were /proc/sys writable, nothing on the host would change.
    const r = await run({
      sandbox,
      argv: ['-c', 'v=$(cat /proc/sys/kernel/core_pattern) && { printf "%s\\n" "$v" > /proc/sys/kernel/core_pattern; } 2>/dev/null && echo SYSCTL-WRITTEN; grep -c . /proc/sys/kernel/core_pattern; grep CapEff /proc/self/status'],
    });
    assert.match(r.stdout, /^1$/m, `${name}: /proc/sys is readable (${r.stderr})`);
    assert.not.match(r.stdout, /SYSCTL-WRITTEN/, `${name}: a sysctl was written from inside the sandbox`);
    if (host.root) assert.match(r.stdout, /CapEff:\s+0+$/m, `${name}: no capabilities`);
  }
  assert.is(readFileSync('/proc/sys/kernel/core_pattern', 'utf8'), before);
});

test("mount_path / (a write-workspace skill's view): the sandbox's own /proc and /dev; no host process, no other call's secret through /proc/<pid>/root", async () => {
  if (!host.bwrap.works) return skip('no bubblewrap');
  const work = join(dir, 'ws-work');
  mkdirSync(work, { recursive: true });
  const tmpRoot = join(dir, 'tmp-slash');
  mkdirSync(tmpRoot, { recursive: true });
  // A host process the tool must not see, and a concurrent call whose file-mount secret it must not read.
  const m = marker();
  const outside = spawn('sleep', ['30', m], { stdio: 'ignore' });
  const stop = new AbortController();
  const SECRET = 'holder-secret-c4e1';
  const holder = run({ sandbox: { level: 'process', capabilities: { filesystem: { mode: 'deny' }, secrets: { injection: 'file-mount' } } }, argv: ['-c', 'cat "$K_FILE" >/dev/null && sleep 30'], secrets: { K: SECRET }, tmpRoot, signal: stop.signal });
  try {
    let secretFile: string | undefined;
    for (let i = 0; i < 300 && !secretFile; i++) {
      secretFile = filesBelow(tmpRoot).find((f) => f.endsWith('/K'));
      if (!secretFile) await sleep(10);
    }
    assert.ok(secretFile, 'the holder mounted its secret');
    await sleep(100); // the holder's tool is running inside its namespace
    const r = await run({
      sandbox: scoped(['/', 'ro'], [work, 'rw']),
      tmpRoot,
      argv: [
        '-c',
        `echo pids=$(ls -d /proc/[0-9]* | wc -l); cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '; echo; for p in /proc/[0-9]*; do cat "$p/root${secretFile}" "$p/root${rt.data}/memory/agent.db" 2>/dev/null; done; ls /dev; ${readRuntime()}; echo done`,
      ],
    });
    assert.match(r.stdout, /^done$/m, r.stderr);
    const pids = Number(/^pids=(\d+)$/m.exec(r.stdout)?.[1]);
    assert.ok(pids > 0 && pids < 10, `only the sandbox's own processes in /proc: ${pids}`);
    assert.not.match(r.stdout, m, 'a host process is visible in /proc');
    assert.not.match(r.stdout, SECRET, "another call's secret was read through /proc/<pid>/root");
    assert.equal(leaked(r), [], "the runtime's files were read");
    for (const dev of ['kmsg', 'loop0', 'vda', 'sda', 'mem']) {
      if (existsSync(`/dev/${dev}`)) assert.not.match(r.stdout, new RegExp(`^${dev}$`, 'm'), `the host's /dev/${dev} is visible`);
    }
  } finally {
    outside.kill('SIGKILL');
    stop.abort();
    await holder;
  }
});

test("a write-workspace skill's view (`/` read-only, the workspace read-write): the workspace is writable, data_dir and the secrets stay hidden", async () => {
  if (!host.bwrap.works) return skip('no bubblewrap');
  const sandbox: SandboxSpec = { ...skillSandbox({ filesystem: 'write-workspace', network: false }, rt.ws)!, level: 'process' };
  const r = await run({ sandbox, argv: ['-c', `echo new > ${rt.ws}/new.txt && echo WS-OK; echo x > /etc/x 2>/dev/null && echo ETC-WRITTEN; ${readRuntime()}; ls -A ${rt.data}`] });
  assert.match(r.stdout, /^WS-OK$/m, `the workspace is writable (${r.stderr})`);
  assert.not.match(r.stdout, /ETC-WRITTEN/);
  assert.equal(leaked(r), [], r.stdout);
  assert.is(readFileSync(join(rt.ws, 'new.txt'), 'utf8'), 'new\n');
  rmSync(join(rt.ws, 'new.txt'));
});

test('a mount_path inside /proc or /dev is refused: by claw validate and at STARTING as written, at launch on the real path (a symlink to /proc)', async () => {
  const issues = (...paths: string[]) => validateMountPaths({ mode: 'scoped', mount_paths: paths.map((path) => ({ path, permissions: 'ro' as const })) });
  assert.equal(issues('/', '/procfs', '/device', '/srv').length, 0);
  assert.equal(issues('/proc', '/proc/self/fd', '//proc/1/root', '/dev', '/dev/shm').length, 5);
  assert.match(issues('/dev/shm')[0].message, /inside \/dev: the sandbox mounts its own \/dev/);
  assert.equal(issues('/dev/shm')[0].path, ['capabilities', 'filesystem', 'mount_paths', 0, 'path']);
  for (const p of ['/proc', '/proc/self/fd', '/dev', '/dev/shm']) {
    const lc = checkLevel(scoped([p, 'ro']), host);
    assert.not.ok(lc.ok, p);
    if (!lc.ok) assert.match(lc.message, /the sandbox mounts its own/, p);
  }
  if (!host.bwrap.works) return skip('no bubblewrap: the launch check');
  for (const target of ['/proc', '/proc/self', '/dev', '/dev/shm']) {
    const link = join(dir, `link-${target.replaceAll('/', '_')}`);
    symlinkSync(target, link);
    const err = await run({ sandbox: scoped([link, 'ro']), argv: ['-c', 'ls'] }).then(
      () => undefined,
      (e: { code?: string; message: string }) => e,
    );
    assert.is(err?.code, 'sandbox-mount-path', `${target}: ${err?.message}`);
    assert.match(err!.message, /the sandbox mounts its own/);
  }
});

test("the runtime's files inside a granted directory are hidden (the workspace stays shared); a granted directory inside data_dir is refused", async () => {
  if (!host.bwrap.works) return skip('no bubblewrap');
  for (const perm of ['ro', 'rw'] as const) {
    const r = await run({ sandbox: scoped([rt.root, perm]), argv: ['-c', `${readRuntime()}; ls -A ${rt.data} ${rt.secrets}; cat ${rt.ws}/shared.txt; echo; find ${rt.root} -type f`] });
    assert.equal(leaked(r), [], `${perm}: ${r.stdout}`);
    assert.match(r.stdout, /workspace-file/, `${perm}: the workspace is shared`);
    assert.not.match(r.stdout, /agent\.db|audit\.jsonl|OPENAI_API_KEY/, `${perm}: a runtime file is listed`);
  }
  for (const p of [join(rt.data, 'memory'), rt.secrets, rt.config]) {
    const lc = checkLevel(scoped([p, 'ro']), host);
    assert.not.ok(lc.ok, p);
  }
  const link = join(dir, 'link-to-memory');
  symlinkSync(join(rt.data, 'memory'), link);
  const err = await run({ sandbox: scoped([link, 'ro']), argv: ['-c', 'ls'] }).then(
    () => undefined,
    (e: { code?: string }) => e,
  );
  assert.is(err?.code, 'sandbox-private-path');
});

test("a writable mount_path from which the tool could move data_dir's parent aside is refused; a data_dir it cannot move stays hidden", async () => {
  // rw /srv with data_dir at /srv/claw/data: `mv /srv/claw /srv/x` would leave data_dir unmasked at /srv/x/data for the next tool.
  const srv = join(dir, 'srv');
  const r2 = runtimeLayout(join(srv, 'claw'));
  const h = withPrivate(host, r2);
  const lc = checkLevel(scoped([srv, 'rw']), h);
  assert.not.ok(lc.ok, 'a movable parent of data_dir');
  if (!lc.ok) assert.match(lc.message, new RegExp(`lies below ${join(srv, 'claw')}, which this sandbox lets the tool rename`));
  // A mount point cannot be renamed: data_dir directly inside the rw mount, or a read-only mount over its parent.
  assert.ok(checkLevel(scoped([join(srv, 'claw'), 'rw']), h).ok, 'data_dir directly inside the rw mount');
  assert.ok(checkLevel(scoped([srv, 'rw'], [join(srv, 'claw'), 'ro']), h).ok, 'a read-only mount over the parent');
  assert.ok(checkLevel(scoped([srv, 'ro']), h).ok, 'read-only');
  if (!host.bwrap.works) return skip('no bubblewrap: the launch check');
  // Through a symlink the paths as written say nothing; the real ones at launch do.
  const link = join(dir, 'srv-link');
  symlinkSync(srv, link);
  const err = await run({ host: h, sandbox: scoped([link, 'rw']), argv: ['-c', 'ls'] }).then(
    () => undefined,
    (e: { code?: string; message: string }) => e,
  );
  assert.is(err?.code, 'sandbox-private-path', err?.message);
  // Directly inside: the tool cannot move or remove the masked data_dir, and the next tool sees nothing of it.
  const first = await run({ host: h, sandbox: scoped([join(srv, 'claw'), 'rw']), argv: ['-c', `mv ${r2.data} ${srv}/claw/moved && echo MOVED; rmdir ${r2.data} && echo REMOVED; echo done`] });
  assert.match(first.stdout, /^done$/m, first.stderr);
  assert.not.match(first.stdout, /MOVED|REMOVED/);
  const next = await run({ host: h, sandbox: scoped([join(srv, 'claw'), 'ro']), argv: ['-c', `cat ${r2.data}/memory/agent.db ${srv}/claw/moved/memory/agent.db 2>/dev/null; find ${srv} -name agent.db`] });
  assert.not.match(next.stdout, new RegExp(`${DB}|agent\\.db`), next.stdout);
});

test('TMPDIR inside data_dir (the tmp root is data_dir/tmp): the tool runs with a writable TMPDIR and its own secret, and sees nothing else of data_dir', async () => {
  if (!host.bwrap.works) return skip('no bubblewrap');
  const tmpRoot = join(rt.data, 'tmp');
  mkdirSync(tmpRoot, { recursive: true });
  const views: [string, SandboxSpec][] = [
    ['deny', mode('deny')],
    ['read-only', mode('read-only')],
    ['full', mode('full')],
    ['scoped on the parent of data_dir', scoped([rt.root, 'ro'])],
  ];
  try {
    for (const [name, spec] of views) {
      const sandbox: SandboxSpec = { ...spec, capabilities: { ...spec.capabilities, secrets: { injection: 'file-mount' } } };
      const r = await run({
        sandbox,
        tmpRoot,
        secrets: { OWN: 'own-secret-value' },
        argv: ['-c', `echo x > "$TMPDIR/w" && echo TMP-OK; echo own=$(cat "$OWN_FILE"); ${readRuntime()}; find ${rt.data} -type f 2>/dev/null`],
      });
      assert.match(r.stdout, /^TMP-OK$/m, `${name}: TMPDIR writable (${r.stderr})`);
      assert.match(r.stdout, /^own=own-secret-value$/m, `${name}: its own secret`);
      assert.equal(leaked(r), [], `${name}: ${r.stdout}`);
      const files = r.stdout.split('\n').filter((l) => l.startsWith(`${rt.data}/`));
      assert.ok(files.every((f) => f.endsWith('/w') || f.endsWith('/OWN') || f.startsWith(`${rt.ws}/`)), `${name}: data_dir files listed: ${files.join(', ')}`);
    }
  } finally {
    drainRunDirs();
    rmSync(tmpRoot, { recursive: true, force: true });
  }
});

test('a racer swapping a nested mount_path for a symlink into data_dir (between the check and the bind) never shows data_dir', async () => {
  if (!host.bwrap.works) return skip('no bubblewrap');
  if (!host.bwrap.bindFd) return skip('this bubblewrap has no --ro-bind-fd: binds go by path, the race stays open (docs/security.md)');
  // /share is writable by some other tool; this tool's sandbox has /share/sub read-only.
  const share = join(dir, 'share');
  const sub = join(share, 'sub');
  mkdirSync(sub, { recursive: true });
  writeFileSync(join(sub, 'agent.db'), 'the-share-file');
  const racer = startRacer(sub, join(rt.data, 'memory'));
  let hits = 0;
  const outcomes: Record<string, number> = {};
  try {
    for (let i = 0; i < 60; i++) {
      const r = await run({ sandbox: scoped([sub, 'ro']), argv: ['-c', `cat ${sub}/agent.db`] }).then(
        (x) => x,
        (e: { code?: string }) => ({ refused: e.code }) as const,
      );
      const k = 'refused' in r ? `refused ${r.refused}` : r.stdout.includes(DB) ? 'LEAKED' : r.stdout.includes('the-share-file') ? 'share' : /Race condition/.test(r.stderr) ? 'bwrap race check' : `other: ${r.stderr.trim().slice(0, 80)}`;
      outcomes[k] = (outcomes[k] ?? 0) + 1;
      if (k === 'LEAKED') hits++;
    }
  } finally {
    racer.kill('SIGKILL');
    await new Promise((r) => racer.once('exit', r));
  }
  if (process.env.CLAW_TEST_VERBOSE) console.log('  race outcomes:', JSON.stringify(outcomes));
  assert.is(hits, 0, `data_dir shown through a swapped mount_path: ${JSON.stringify(outcomes)}`);
});

/** A process that keeps swapping `dir` for a symlink to `target` and back. */
function startRacer(dir: string, target: string): ChildProcess {
  const code = `const fs=require('fs');const d=${JSON.stringify(dir)},t=${JSON.stringify(target)},a=d+'.real';for(;;){try{fs.renameSync(d,a);fs.symlinkSync(t,d);fs.unlinkSync(d);fs.renameSync(a,d);}catch{}}`;
  return spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
}

test("descriptors inherited without close-on-exec (a supervisor's pipe) are /dev/null in the tool, with bubblewrap and without", async () => {
  const fx = join(dir, 'fx');
  mkdirSync(fx, { recursive: true });
  chmodSync(fx, 0o755);
  const out = join(fx, 'inherited-fd.mjs');
  await build({ entryPoints: [join(process.cwd(), 'test/fixtures/sandbox/inherited-fd.ts')], bundle: true, platform: 'node', format: 'esm', outfile: out, logLevel: 'error', packages: 'external' });
  // bash opens fd 100 for the exec without close-on-exec, as a supervisor's or a login shell's descriptor reaches a
  // runtime (Node itself marks the low ones close-on-exec at start, measured: up to about 10; 100 stays open).
  const sink = join(fx, 'fd100');
  writeFileSync(sink, '');
  const child = spawn('bash', ['-c', 'exec "$0" "$1" 100>>"$2"', process.execPath, out, sink], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: baseEnv.PATH, HOME: fx } });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (b) => (stdout += b));
  child.stderr!.on('data', (b) => (stderr += b));
  const code = await new Promise((r) => child.once('close', r));
  assert.is(code, 0, stderr);
  const res = JSON.parse(stdout.trim().split('\n').pop()!);
  assert.is(readFileSync(sink, 'utf8'), '', `a tool wrote into the runtime's inherited descriptor: ${JSON.stringify(res)}`);
  for (const name of res.bwrap ? ['bubblewrap', 'no bubblewrap'] : ['no bubblewrap']) {
    assert.match(res[name], /^fd100=\/dev\/null$/m, `${name}: ${res[name]}`);
  }
});

test("the runtime's environment does not reach the tool, not even through /proc/1/environ (bubblewrap's own)", async () => {
  if (!host.bwrap.works) return skip('no bubblewrap');
  const env = { ...baseEnv, OPENAI_API_KEY: 'sk-env-leak-0d9f', CLAW_SECRETS_DIR: rt.secrets };
  for (const sandbox of [mode('deny'), mode('read-only')]) {
    const r = await run({ sandbox, env, argv: ['-c', 'env; cat /proc/1/environ | tr "\\0" "\\n"; for p in /proc/[0-9]*; do tr "\\0" "\\n" < $p/environ; done 2>/dev/null'] });
    assert.not.match(r.stdout, /sk-env-leak|CLAW_SECRETS_DIR/, r.stdout);
  }
});

function filesBelow(d: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(d, { withFileTypes: true })) {
    const p = join(d, e.name);
    if (e.isDirectory()) out.push(...filesBelow(p));
    else out.push(p);
  }
  return out;
}

test.run();
