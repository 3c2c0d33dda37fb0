// Shared fakes for the kernel unit tests: a manual clock, a capturing logger, a capturing frame,
// a prebuilt ResolvedManifest and a deferred promise. No timers, no I/O.
import type { Clock, InboundFrame, Logger } from '../../../src/kernel/ports.ts';
import type { JsonRpcMessage } from '../../../src/protocol/jsonrpc.ts';
import type { ResolvedManifest, ResolvedPrimitive } from '../../../src/manifest/resolved.ts';
import type { PrimitiveKind } from '../../../src/manifest/kinds.ts';

/** A Clock whose timers fire only when the test calls advance(). */
export class FakeClock implements Clock {
  wall = Date.parse('2026-02-22T10:30:00.000Z');
  mono = 1_000;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void; every?: number }>();

  now(): number {
    return this.wall;
  }
  monotonic(): number {
    return this.mono;
  }
  setInterval(fn: () => void, ms: number): { cancel(): void } {
    const id = ++this.seq;
    this.timers.set(id, { at: this.mono + ms, fn, every: ms });
    return { cancel: () => this.timers.delete(id) };
  }
  setTimeout(fn: () => void, ms: number): { cancel(): void } {
    const id = ++this.seq;
    this.timers.set(id, { at: this.mono + ms, fn });
    return { cancel: () => this.timers.delete(id) };
  }
  /** Number of live timers. */
  get pending(): number {
    return this.timers.size;
  }
  /** Move both clocks forward, firing due timers in time order. */
  advance(ms: number): void {
    const target = this.mono + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void; every?: number }] | undefined;
      for (const e of this.timers) if (e[1].at <= target && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      const [id, t] = next;
      this.wall += t.at - this.mono;
      this.mono = t.at;
      if (t.every !== undefined) t.at += t.every;
      else this.timers.delete(id);
      t.fn();
    }
    this.wall += target - this.mono;
    this.mono = target;
  }
}

export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  fields?: Record<string, unknown>;
}

export function captureLogger(): Logger & { entries: LogEntry[]; text(): string } {
  const entries: LogEntry[] = [];
  const at = (level: LogEntry['level']) => (msg: string, fields?: Record<string, unknown>) => {
    entries.push({ level, msg, fields });
  };
  return {
    entries,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    text: () => entries.map((e) => JSON.stringify(e)).join('\n'),
  };
}

export type Reply = JsonRpcMessage | JsonRpcMessage[];

/** A frame whose replies are captured (in the order the router sends them). */
export function textFrame(text: string, replies: Reply[]): InboundFrame {
  return { payload: { text }, reply: (m) => replies.push(m) };
}

export function deferred<T = void>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Let pending promise callbacks (and one macrotask turn) run. */
export const tick = (ms = 0) => new Promise<void>((r) => setTimeout(r, ms));

/** Poll until `cond` holds (real time); throws after `timeoutMs`. */
export async function until(cond: () => boolean, timeoutMs = 2_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error('until(): condition not met in time');
    await tick(1);
  }
}

export function primitive(kind: PrimitiveKind, name: string, spec: Record<string, unknown> = {}): ResolvedPrimitive {
  return { kind, name, labels: {}, annotations: {}, spec, origin: { file: '<test>', specPath: ['spec'] } };
}

/** A resolved manifest of conformance level 1, 2 or 3 (spec §11 required primitives). */
export function makeManifest(level: 1 | 2 | 3 = 1, over: Partial<ResolvedManifest> = {}): ResolvedManifest {
  const m: ResolvedManifest = {
    generation: '0.3',
    claw: '0.3.0',
    file: '<initialize>',
    name: 'test-agent',
    version: '1.2.3',
    labels: {},
    annotations: {},
    identity: primitive('Identity', 'test-identity'),
    providers: [primitive('Provider', 'p1')],
    channels: [],
    tools: [],
    skills: [],
    worldModels: [],
    policies: [],
  };
  if (level >= 2) {
    m.channels = [primitive('Channel', 'c1')];
    m.tools = [primitive('Tool', 't1')];
    m.sandbox = primitive('Sandbox', 's1');
    m.policies = [primitive('Policy', 'pol1')];
  }
  if (level >= 3) {
    m.skills = [primitive('Skill', 'sk1')];
    m.memory = primitive('Memory', 'm1');
    m.swarm = primitive('Swarm', 'sw1');
  }
  return { ...m, ...over };
}
