// The systemd deployment (targets/systemd, docs/boards.md "systemd"): install.sh lays out a tree that
// `systemd-analyze verify` accepts, and the unit's hardening leaves the process sandbox working. No
// systemd runs as PID 1 in CI containers, so the hardening is emulated with the same kernel mechanisms
// systemd uses (a private mount namespace, read-only remounts, setpriv for the user, no_new_privs and the
// capability bounding set) and a real exec tool runs through bubblewrap under it. Not emulated: the
// seccomp filters behind RestrictNamespaces= and RestrictAddressFamilies=.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { CLAW, initParams, ROOT, startClaw } from './helpers/claw-process.ts';
import { IDENTITY, manifest } from './helpers/l2-agent.ts';

const UNITS = ['claw.service', 'claw-health.service', 'claw-health.timer'];
const UNIT_DIR = join(ROOT, 'targets/systemd');
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));

/** install.sh into a fresh root, plus what verify needs there: systemd's own units and every Exec* binary. */
function installedRoot(): string {
  const root = tmp('claw-systemd-root-');
  const r = spawnSync('sh', [join(UNIT_DIR, 'install.sh'), join(ROOT, 'examples/minimal/claw.yaml')], { env: { ...process.env, DESTDIR: root }, encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  mkdirSync(join(root, 'usr/lib/systemd'), { recursive: true });
  cpSync('/usr/lib/systemd/system', join(root, 'usr/lib/systemd/system'), { recursive: true });
  for (const unit of UNITS) {
    for (const m of readFileSync(join(UNIT_DIR, unit), 'utf8').matchAll(/^Exec\w+=[-+!@:]*(\/\S+)/gm)) {
      const bin = join(root, m[1]);
      if (existsSync(bin)) continue;
      mkdirSync(join(bin, '..'), { recursive: true });
      writeFileSync(bin, '#!/bin/sh\n', { mode: 0o755 });
    }
  }
  return root;
}

function verify(root: string): { status: number | null; out: string } {
  const r = spawnSync('systemd-analyze', ['verify', '--man=no', `--root=${root}`, ...UNITS], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const analyze = has('systemd-analyze');
if (!analyze) console.log('  (skipped: systemd-analyze not installed; scripts/test-deps.sh installs systemd)');

test('install.sh lays out a tree whose units systemd-analyze verify accepts without a warning', () => {
  if (!analyze) return;
  const root = installedRoot();
  try {
    assert.is(readFileSync(join(root, 'etc/claw/claw.runtime.yaml'), 'utf8').match(/^data_dir: (.*)$/m)?.[1], '/var/lib/claw', 'data_dir is the StateDirectory');
    assert.ok(existsSync(join(root, 'etc/claw/credentials/API_KEY')), 'a placeholder for every LoadCredential= source');
    const r = verify(root);
    assert.is(r.status, 0, r.out);
    assert.is(r.out.trim(), '', 'no warnings');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the verify check bites: a misspelt key and an unknown namespace are reported', () => {
  if (!analyze) return;
  const root = installedRoot();
  try {
    const unit = join(root, 'etc/systemd/system/claw.service');
    writeFileSync(unit, readFileSync(unit, 'utf8').replace('MemoryMax=', 'MemoryMaks=').replace('RestrictNamespaces=~time', 'RestrictNamespaces=~thyme'));
    const r = verify(root);
    assert.match(r.out, /Unknown key 'MemoryMaks'/);
    assert.match(r.out, /thyme/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the unit keeps the settings the emulation below depends on, and none that break bubblewrap', () => {
  const unit = readFileSync(join(UNIT_DIR, 'claw.service'), 'utf8');
  const set = (k: string) => unit.match(new RegExp(`^${k}=(.*)$`, 'm'))?.[1];
  assert.is(set('NoNewPrivileges'), 'yes');
  assert.is(set('ProtectSystem'), 'strict');
  assert.is(set('PrivateTmp'), 'yes');
  assert.is(set('CapabilityBoundingSet'), '');
  assert.is(set('User'), 'claw');
  assert.is(set('StateDirectory'), 'claw');
  assert.is(set('Environment=CLAW_SECRETS_DIR'), '%d');
  for (const breaks of ['ProtectKernelTunables', 'ProtectKernelLogs', 'ProtectProc', 'ProcSubset', 'PrivateUsers', 'MemoryDenyWriteExecute', 'SystemCallFilter']) {
    assert.is(set(breaks), undefined, `${breaks} is not set`);
  }
});

// ---- the hardening, emulated ----

const NOBODY = 65534;
const canEmulate = process.getuid?.() === 0 && has('unshare') && has('setpriv') && has('bwrap');
if (!canEmulate) console.log('  (skipped: the hardening emulation needs root, unshare, setpriv and bwrap)');

const PROBE_TOOL = `    - inline:
        name: "probe"
        description: "runs the bound probe script"
        input_schema: { type: "object" }`;

/**
 * Runs claw as the unit would: its own mount namespace with / read-only except the state directory
 * (ProtectSystem=strict + StateDirectory), a private writable tmpfs for temporary files (PrivateTmp: the
 * unit's is /tmp; here /var/tmp through TMPDIR, since this test's own directory lives in /tmp), then an unprivileged user with
 * no_new_privs and an empty capability bounding set. `extra` adds mounts a setting left out would make.
 */
function unitLike(state: string, extra: string[] = []): string[] {
  const setup = [
    'mount --make-rprivate /',
    `mount --bind ${state} ${state}`,
    'mount -o remount,bind,ro /',
    'mount -t tmpfs -o mode=1777 tmpfs /var/tmp',
    ...extra,
    `exec setpriv --reuid=${NOBODY} --regid=${NOBODY} --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all "$0" "$@"`,
  ].join(' && ');
  return ['unshare', '-m', 'sh', '-c', setup];
}

async function probeUnder(extra: string[]): Promise<{ result?: string; error?: string; stderr: string }> {
  const dir = tmp('claw-unit-');
  const creds = join(dir, 'credentials');
  mkdirSync(creds, { mode: 0o700 });
  writeFileSync(join(creds, 'API_KEY'), 'sk-credential-0123456789', { mode: 0o400 });
  const sandbox = '      level: "process"\n      capabilities:\n        network: { mode: "deny" }\n        filesystem: { mode: "read-only" }';
  writeFileSync(join(dir, 'claw.yaml'), manifest({ tools: PROBE_TOOL, sandbox }));
  const script = 'echo "uid=$(id -u) pid1=$(cat /proc/1/comm) net=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\\n" " ")"; touch /etc/x 2>/dev/null && echo etc-writable || echo etc-ro';
  writeFileSync(join(dir, 'claw.runtime.yaml'), `data_dir: ./state\ntools:\n  probe:\n    exec: { bin: /bin/sh, argv: ["-c", ${JSON.stringify(script)}] }\n`);
  mkdirSync(join(dir, 'state'));
  for (const p of [dir, creds, join(creds, 'API_KEY'), join(dir, 'state'), join(dir, 'claw.yaml'), join(dir, 'claw.runtime.yaml')]) chownSync(p, NOBODY, NOBODY);
  // The runtime as installed (install.sh: readable by the service user): the checkout itself may sit in a
  // directory only root can enter (`mktemp -d` makes 0700 ones).
  cpSync(dirname(CLAW), join(dir, 'app'), { recursive: true });
  chmodSync(dir, 0o700);
  // LoadCredential= → CLAW_SECRETS_DIR=%d: the provider's API_KEY comes from the credentials directory only.
  const claw = startClaw(['run', join(dir, 'claw.yaml')], { cwd: dir, env: { CLAW_SECRETS_DIR: creds, HOME: join(dir, 'state'), TMPDIR: '/var/tmp' }, wrap: unitLike(dir, extra), bundle: join(dir, 'app', basename(CLAW)) });
  try {
    const init = await claw.request('claw.initialize', initParams(), 'init').catch((e) => ({ error: String(e) }));
    if (!init.result) return { error: JSON.stringify(init.error ?? init), stderr: claw.stderr() };
    const r = await claw.request('claw.tool.call', { name: 'probe', arguments: {}, context: { request_id: 'unit-1', identity: IDENTITY } });
    return { result: r.result?.content?.map((c: any) => c.text).join(''), error: r.error ? JSON.stringify(r.error) : r.result?.isError ? 'isError' : undefined, stderr: claw.stderr() };
  } finally {
    await claw.end();
    assert.equal(claw.garbage, [], 'stdout carries protocol messages only');
    rmSync(dir, { recursive: true, force: true });
  }
}

test('under the unit\'s hardening an exec tool still runs in bubblewrap: own pid and network namespaces, read-only root', async () => {
  if (!canEmulate) return;
  const r = await probeUnder([]);
  assert.is(r.error, undefined, `${r.error} ${r.stderr.slice(-1500)}`);
  assert.match(r.result ?? '', `uid=${NOBODY} `);
  assert.match(r.result ?? '', /pid1=(sh|bwrap) /, 'a pid namespace of its own');
  assert.match(r.result ?? '', /net=lo $/m, `network deny: loopback only: ${r.result}`);
  assert.match(r.result ?? '', 'etc-ro');
});

test('why the unit leaves ProtectKernelTunables off: with /proc/sys over-mounted, bubblewrap cannot mount /proc', async () => {
  if (!canEmulate) return;
  const r = await probeUnder(['mount --bind /proc/sys /proc/sys', 'mount -o remount,bind,ro /proc/sys']);
  assert.ok(r.error !== undefined || !/uid=/.test(r.result ?? ''), `the tool ran anyway: ${r.result}`);
  // The sandbox probe mounts /proc as a tool run does, so the runtime refuses at STARTING (-32010), naming
  // bubblewrap's reason, instead of starting and failing every tool call.
  assert.match(r.error ?? '', '-32010');
  assert.match(`${r.error} ${r.stderr}`, /[Cc]an't mount proc/, 'bubblewrap says why');
});

test.run();
