// Several swarm nodes in one process over the in-memory bus, with scripted task runners.
// Real timers with short intervals: the coordinator's waits are what is under test.
import { MemoryHub } from '../../src/swarm/memory-bus.ts';
import { SwarmNode } from '../../src/swarm/node.ts';
import { planOf } from '../../src/swarm/plan.ts';
import type { TaskOutcome, TaskRunner } from '../../src/swarm/peer.ts';
import type { SwarmSpec } from '../../src/manifest/schema/index.ts';
import type { Logger } from '../../src/kernel/ports.ts';

export const realClock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setInterval(fn: () => void, ms: number) {
    const t = setInterval(fn, ms);
    return { cancel: () => clearInterval(t) };
  },
};

/** The real clock whose wall time jumps by `jump(ms)` (a board's first NTP sync, `date -s`); monotonic time does not. */
export function jumpingClock() {
  let offset = 0;
  return { ...realClock, now: () => Date.now() + offset, jump: (ms: number) => void (offset += ms) };
}

export interface LogLine {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

export function captureLog(lines: LogLine[]): Logger {
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, fields });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A runner: answers with `fn(task input)` after `delayMs`, counting concurrency. */
export function scripted(fn: (input: any, self: string) => TaskOutcome, delayMs = 0) {
  const stats = { calls: 0, active: 0, maxActive: 0, inputs: [] as any[] };
  const make = (self: string): TaskRunner => ({
    async run(task) {
      stats.calls++;
      stats.active++;
      stats.maxActive = Math.max(stats.maxActive, stats.active);
      stats.inputs.push(task.input);
      try {
        if (delayMs) await sleep(delayMs);
        return fn(task.input, self);
      } finally {
        stats.active--;
      }
    },
  });
  return { stats, make };
}

export function spec(over: Partial<SwarmSpec> & { agents: SwarmSpec['agents'] }): SwarmSpec {
  return {
    topology: 'leader-worker',
    coordination: { message_passing: 'queue', backend: 'in-process', concurrency: { max_parallel: 4 } },
    aggregation: { strategy: 'merge', timeout_ms: 5000 },
    ...over,
  } as SwarmSpec;
}

export interface Built {
  hub: MemoryHub;
  nodes: Record<string, SwarmNode>;
  broadcasts: Record<string, unknown[]>;
  log: LogLine[];
  stop(): Promise<void>;
}

/** Start one node per agents[] entry (or per `ids`), each with runnerFor(id). */
export async function build(
  s: SwarmSpec,
  runnerFor: (id: string) => TaskRunner,
  opts: { ids?: string[]; clock?: typeof realClock; timing?: Partial<{ ackTimeoutMs: number; retryInitialMs: number; retryMaxMs: number; presencePollMs: number; unavailableGraceMs: number }>; name?: string } = {},
): Promise<Built> {
  const hub = new MemoryHub();
  const plan = planOf(opts.name ?? 'team', s);
  const log: LogLine[] = [];
  const nodes: Record<string, SwarmNode> = {};
  const broadcasts: Record<string, unknown[]> = {};
  const ids = opts.ids ?? s.agents.map((a) => a.identity_ref);
  for (const id of ids) {
    broadcasts[id] = [];
    nodes[id] = new SwarmNode({
      bus: hub.connect(id),
      plan,
      runner: runnerFor(id),
      log: captureLog(log),
      clock: opts.clock ?? realClock,
      presenceMs: 1000,
      costAware: s.aggregation.cost_aware ?? false,
      timing: { ackTimeoutMs: 500, retryInitialMs: 10, retryMaxMs: 40, presencePollMs: 10, unavailableGraceMs: 0, ...opts.timing },
      onBroadcast: (p) => broadcasts[id].push(p),
      reportAttempts: 3,
    });
    await nodes[id].start();
  }
  const built: Built = { hub, nodes, broadcasts, log, stop: async () => void (live.delete(built), await Promise.all(Object.values(nodes).map((n) => n.stop()))) };
  live.add(built);
  return built;
}

const live = new Set<Built>();
/** test.after.each: a failed assertion must not leave nodes (and their timers) running. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((b) => b.stop()));
}

let seq = 0;
/** A delegate params object for `swarm` with a fresh task_id. */
export function task(input: Record<string, unknown> = {}, swarm = 'team') {
  seq++;
  return { task_id: `t-${seq}`, task: { description: `task ${seq}`, input }, context: { request_id: `r-${seq}`, swarm } };
}
