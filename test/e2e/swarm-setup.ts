// Three `claw run` processes from examples/swarm (leader + two workers), copied to a temp directory
// with their claw.runtime.yaml pointed at a test bus and short timings. Shared by the fs and MQTT
// swarm suites; every child is killed by close(), whatever the test outcome.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { ROOT, initParams, startClaw, type ClawRun } from './helpers/claw-process.ts';

export const AGENTS = ['leader', 'worker-a', 'worker-b'] as const;
export type AgentName = (typeof AGENTS)[number];

export interface Swarm {
  dir: string;
  procs: Record<AgentName, ClawRun>;
  /** Restart-free helpers on the leader. */
  discover(): Promise<{ identity: string; uri: string; status: string }[]>;
  waitPeers(pred: (peers: { identity: string; status: string }[]) => boolean, ms?: number): Promise<{ identity: string; uri: string; status: string }[]>;
  close(): Promise<void>;
}

let seq = 0;

/** `bus(dir)` gives the swarm.bus value; `extraConfig` is appended to every claw.runtime.yaml; `bundle` another build than dist/claw.mjs. */
export async function startSwarm(bus: (dir: string) => string, extraConfig = '', bundle?: string): Promise<Swarm> {
  // Another bundle in place of dist/claw.mjs: sh drops the helper's node + claw.mjs.
  const wrap = bundle ? ['sh', '-c', `shift 2; exec "${process.execPath}" "${bundle}" "$@"`, 'sh'] : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'claw-swarm-'));
  cpSync(join(ROOT, 'examples', 'swarm'), dir, { recursive: true });
  for (const a of AGENTS) {
    const f = join(dir, a, 'claw.runtime.yaml');
    const text = readFileSync(f, 'utf8')
      .replace(/bus: .*/, `bus: ${bus(dir)}`)
      .replace(/presence_interval_ms: \d+/, 'presence_interval_ms: 200')
      .replace(/retry_initial_ms: \d+/, 'retry_initial_ms: 100')
      .replace(/retry_max_ms: \d+/, 'retry_max_ms: 400');
    assert.ok(text.includes(`bus: ${bus(dir)}`), 'example runtime config has a swarm.bus line');
    writeFileSync(f, text + extraConfig);
  }
  const procs = {} as Record<AgentName, ClawRun>;
  try {
    for (const a of AGENTS) procs[a] = startClaw(['run', join(dir, a, 'claw.yaml')], { cwd: dir, env: { LOCAL_CLI_TOKEN: 'local-token' }, wrap });
    // Three runtimes (and their memory databases) start at once on a shared machine: generous wait.
    const inits = await Promise.all(
      AGENTS.map((a) => {
        const id = `init-${++seq}`;
        procs[a].send({ jsonrpc: '2.0', id, method: 'claw.initialize', params: initParams() });
        return procs[a].waitFor((m) => m.id === id, 30_000);
      }),
    );
    for (const [i, r] of inits.entries()) {
      assert.ok(r.result, `${AGENTS[i]} initialize failed: ${JSON.stringify(r.error)} ${procs[AGENTS[i]].stderr().slice(-800)}`);
      assert.equal(r.result.capabilities.swarm, {}, `${AGENTS[i]} answers the swarm group`);
    }
  } catch (e) {
    for (const p of Object.values(procs)) p.kill();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const discover = async () => {
    const r = await procs.leader.request('claw.swarm.discover', { swarm: 'home-team' });
    assert.ok(r.result, JSON.stringify(r.error));
    return r.result.peers;
  };
  return {
    dir,
    procs,
    discover,
    async waitPeers(pred, ms = 8000) {
      const end = Date.now() + ms;
      let last: any[] = [];
      while (Date.now() < end) {
        last = await discover();
        if (pred(last)) return last;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`peers never matched: ${JSON.stringify(last)}`);
    },
    async close() {
      for (const p of Object.values(procs)) p.kill();
      await Promise.all(Object.values(procs).map((p) => p.exited));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const status = (peers: { identity: string; status: string }[], id: string) => peers.find((p) => p.identity === id)?.status;

let tasks = 0;
export function delegation(tool: { name: string; arguments: Record<string, unknown> }) {
  tasks++;
  const n = String(tasks).padStart(12, '0');
  return {
    task_id: `a1b2c3d4-e5f6-7890-abcd-${n}`,
    task: { description: `run ${tool.name}`, input: { tool } },
    context: { request_id: `11111111-2222-3333-4444-${n}`, swarm: 'home-team' },
  };
}

let rid = 0;
/** claw.swarm.result with wait_ms, waiting for the reply accordingly (the helper's request() waits 5 s). */
export async function result(p: ClawRun, task_id: string, waitMs = 15_000): Promise<any> {
  const id = `result-${++rid}`;
  p.send({ jsonrpc: '2.0', id, method: 'claw.swarm.result', params: { task_id, wait_ms: waitMs } });
  const r = await p.waitFor((m) => m.id === id, waitMs + 5000);
  assert.ok(r.result, JSON.stringify(r.error));
  return r.result;
}
