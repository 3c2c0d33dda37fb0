// A runtime killed with SIGKILL in the middle of a tool call: without bubblewrap its tool's processes
// (a setsid() one included) outlive it, and the next runtime on the same data directory kills them at
// STARTING (src/sandbox/orphans.ts). With bubblewrap they die with the runtime. Each test finds its own
// processes by a sleep duration no other test uses, and kills whatever is left of them at the end.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initParams, startClaw, type ClawRun } from './helpers/claw-process.ts';
import { IDENTITY, manifest } from './helpers/l2-agent.ts';

const HIDE_BWRAP = 'for b in /usr/bin/bwrap /bin/bwrap; do [ -e "$b" ] && mount --bind /dev/null "$b"; done';
// Every cgroup mount read-only in this namespace: the runtime's probe finds no writable pids controller.
const HIDE_CGROUPS = 'for m in $(grep -E " - cgroup2? " /proc/self/mountinfo | cut -d" " -f5); do mount -o remount,bind,ro "$m" || exit 99; done';
const canUnshare = spawnSync('unshare', ['-m', 'sh', '-c', `${HIDE_BWRAP}; ${HIDE_CGROUPS}`]).status === 0;
const wrapWith = (setup: string) => ['unshare', '-m', 'sh', '-c', `${setup}; exec "$0" "$@"`];

let seq = 0;
/** A sleep duration (seconds) that names this test's processes in `ps`. */
const uniqueSleep = () => `309.${process.pid}${++seq}`;

/** pid and args of live processes that run `sleep <d>` (the tool's sh -c line contains it too). */
function ours(d: string): { pid: number; args: string }[] {
  const out = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => !!m && !m[2].startsWith('Z') && m[3].includes(`sleep ${d}`) && !m[3].startsWith('ps '))
    .map((m) => ({ pid: Number(m[1]), args: m[3] }));
}

function killOurs(d: string): void {
  for (const p of ours(d)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

async function until<T>(what: string, ms: number, probe: () => T, ok: (v: T) => boolean): Promise<T> {
  const end = Date.now() + ms;
  let v = probe();
  while (!ok(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    v = probe();
  }
  if (!ok(v)) assert.unreachable(`${what}: still ${JSON.stringify(v)} after ${ms} ms`);
  return v;
}

function agentDir(d: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'claw-orphans-'));
  const tool = `    - inline:
        name: "orphaner"
        description: "starts a setsid sleeper and a sleeper"
        input_schema: { type: "object" }
        timeout_ms: 60000`;
  writeFileSync(join(dir, 'claw.yaml'), manifest({ tools: tool }));
  writeFileSync(
    join(dir, 'claw.runtime.yaml'),
    `data_dir: ./data
sandbox:
  allow_downgrade: { bubblewrap: none }
tools:
  orphaner:
    exec:
      bin: /bin/sh
      argv: ["-c", "setsid sleep ${d} & sleep ${d}"]
`,
  );
  return dir;
}

async function start(dir: string, wrap?: string[]): Promise<ClawRun> {
  const c = startClaw(['run', join(dir, 'claw.yaml')], { cwd: dir, wrap });
  const init = await c.request('claw.initialize', initParams(), 'init').catch((e) => ({ error: String(e) }));
  if (!init.result) {
    c.kill();
    assert.unreachable(`initialize failed: ${JSON.stringify(init.error)} ${c.stderr().slice(-1500)}`);
  }
  return c;
}

const records = (dir: string) => {
  const root = join(dir, 'data', 'sandbox-runs');
  return existsSync(root) ? readdirSync(root).flatMap((o) => readdirSync(join(root, o)).filter((f) => f !== 'cgroup-base').map((f) => `${o}/${f}`)) : [];
};

/** Start, call the tool, wait for its three processes, SIGKILL the runtime. */
async function crashMidCall(dir: string, d: string, wrap?: string[]): Promise<{ pid: number; args: string }[]> {
  const c = await start(dir, wrap);
  try {
    c.send({ jsonrpc: '2.0', id: 'call-1', method: 'claw.tool.call', params: { name: 'orphaner', arguments: {}, context: { request_id: 'r-1', identity: IDENTITY } } });
    // Under bubblewrap its two processes carry the tool's command line too.
    return await until('the tool started its three processes', 10_000, () => ours(d), (l) => l.length >= 3);
  } finally {
    c.kill();
    await c.exited;
  }
}

for (const variant of ['no cgroup', 'cgroup'] as const) {
  test(`without bubblewrap (${variant}): the next start kills what a SIGKILLed runtime's tool left running`, async () => {
    if (!canUnshare) {
      console.log('  skipped: needs root and unshare -m to hide bubblewrap and cgroups');
      return;
    }
    const d = uniqueSleep();
    const dir = agentDir(d);
    const wrap = wrapWith(variant === 'cgroup' ? HIDE_BWRAP : `${HIDE_BWRAP}; ${HIDE_CGROUPS}`);
    let next: ClawRun | undefined;
    try {
      await crashMidCall(dir, d, wrap);
      const recs = records(dir);
      assert.is(recs.length, 1, JSON.stringify(recs));
      // The record says what the runtime had: its cgroup (c-record) or the process alone (p-record).
      const viaCgroup = /\/crun-\d+-\d+-[0-9a-z]+$/.test(recs[0]);
      if (variant === 'cgroup' && !viaCgroup) {
        console.log('  skipped: this machine gives the runtime no writable cgroup');
        return;
      }
      if (variant === 'no cgroup') assert.match(recs[0], /\/p\d+\.\d+$/);
      await new Promise((r) => setTimeout(r, 300));
      assert.is(ours(d).length, 3, 'the tool outlived the runtime (setsid sleeper, sleeper, sh)');

      next = await start(dir, wrap);
      await until('nothing of the tool survives the next start', 5000, () => ours(d), (l) => l.length === 0);
      assert.match(next.stderr(), 'swept tool processes of a runtime that died');
      assert.equal(records(dir), [], 'the dead runtime\'s records are gone');
    } finally {
      next?.kill();
      killOurs(d);
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('with bubblewrap: the tool dies with a SIGKILLed runtime (--die-with-parent --unshare-pid), nothing is recorded', async () => {
  if (spawnSync('bwrap', ['--unshare-pid', '--die-with-parent', '--ro-bind', '/', '/', 'true']).status !== 0) {
    console.log('  skipped: no working bubblewrap');
    return;
  }
  const d = uniqueSleep();
  const dir = agentDir(d);
  try {
    const seen = await crashMidCall(dir, d);
    assert.ok(seen.some((p) => /^\S*bwrap /.test(p.args)), `ran under bubblewrap: ${JSON.stringify(seen)}`);
    await until('nothing of the tool survives the runtime', 5000, () => ours(d), (l) => l.length === 0);
    assert.equal(records(dir), [], 'no record under bubblewrap');
  } finally {
    killOurs(d);
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
