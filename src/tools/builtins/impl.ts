// A builtin as a ToolImpl. Builtins that touch the OS run in a child process — our own bundle in
// worker mode (`claw __builtin <name>`) — when the sandbox level is `process` (docs/tools.md: every
// non-builtin tool, and builtins that touch the OS, run in a child process group); under `none` they
// run in-process. `shell` is in-process either way: the program it starts is the child.
import { SandboxViolation, type ToolImpl, type ToolResult, type ToolRunContext } from '../types.ts';
import type { SandboxSpec } from '../../manifest/schema/index.ts';
import type { ProcessRunner } from '../runner-port.ts';
import type { BuiltinContext, BuiltinDef } from './def.ts';
import type { NetworkFetch } from './http-fetch.ts';
import type { MqttToolPort } from './mqtt-port.ts';
import type { A2aPeerPort } from './a2a-port.ts';
import { decodeWorkerReply, outputCap, workerStdoutCap } from './worker-reply.ts';

export interface WorkerCommand {
  /** The runtime binary and the bundle, e.g. [process.execPath, "/opt/claw/claw.mjs"]. */
  argv0: string;
  args: string[];
  /** Paths the worker needs to read under a strict filesystem scope (runtime, bundle). */
  binds: string[];
}

export interface BuiltinDeps {
  run: ProcessRunner;
  fetch: NetworkFetch;
  cwdFor(sandbox: SandboxSpec): string;
  /** Absent in unit tests and embedders: then OS-touching builtins run in-process. */
  worker?: WorkerCommand;
  /** claw.runtime.yaml `mqtt_tools:` (mqtt-publish, mqtt-read). */
  mqtt?: MqttToolPort;
  /** claw.runtime.yaml `a2a.peers` (a2a-send). */
  a2a?: A2aPeerPort;
}

/** The worker's stdin and stdout, one JSON document each. */
export interface WorkerRequest {
  name: string;
  args: Record<string, unknown>;
  sandbox: SandboxSpec;
  cwd: string;
  timeoutMs?: number;
}
export type WorkerReply = { result: ToolResult } | { violation: { rule: string; detail: string } } | { error: string };

/**
 * The sandbox the worker *process* runs under. The worker is our own code and enforces the network
 * rules itself (allowlist, SSRF guard) the way an in-process builtin does, so a host allowlist — which
 * no process-level mechanism can hold an arbitrary program to — is `allow-all` at the process layer;
 * `deny` stays a network namespace. Everything else (filesystem binds, limits, kill) applies as declared.
 */
export function workerProcessSandbox(sb: SandboxSpec): SandboxSpec {
  const net = sb.capabilities?.network;
  if (!net || net.mode === 'deny' || (net.mode !== 'allowlist' && !net.ssrf_protection)) return sb;
  // The SSRF guard, like the allowlist, is the worker's own: nothing for the process layer to refuse.
  return { ...sb, capabilities: { ...sb.capabilities, network: { ...net, mode: 'allow-all', ssrf_protection: { ...net.ssrf_protection, enabled: false } } } };
}

const withOutputCap = (sb: SandboxSpec, max: number): SandboxSpec => ({ ...sb, resource_limits: { ...sb.resource_limits, max_output_bytes: max } });

/** A builtin that runs in a worker child under this sandbox. */
export const runsInWorker = (def: Pick<BuiltinDef, 'touchesOs' | 'isShell'>, sb: SandboxSpec) => def.touchesOs && !def.isShell && sb.level === 'process';

export function createBuiltinImpl(def: BuiltinDef, deps: BuiltinDeps): ToolImpl {
  return {
    kind: 'builtin',
    touchesOs: def.touchesOs,
    isShell: def.isShell,
    commandLine: def.commandLine,
    async run(args, ctx) {
      const cwd = deps.cwdFor(ctx.sandbox);
      const inWorker = runsInWorker(def, ctx.sandbox) && deps.worker;
      // In-process: the builtin's own answer. `signal` is read on the builtin's demand only (the gate
      // creates it lazily).
      if (!inWorker) {
        return def.run(args, new InProcessContext(ctx, cwd, deps));
      }
      return runInWorker(def, deps, deps.worker!, args, ctx, cwd);
    },
  };
}

/**
 * What an in-process builtin sees. A class (a prototype getter) rather than an object literal with
 * a getter, which V8 builds slowly on every call; `signal` is read through only on demand.
 */
class InProcessContext implements BuiltinContext {
  readonly sandbox: SandboxSpec;
  readonly timeoutMs: number | undefined;
  readonly run: ProcessRunner;
  readonly fetch: NetworkFetch;
  readonly mqtt: MqttToolPort | undefined;
  readonly a2a: A2aPeerPort | undefined;
  constructor(
    private readonly ctx: ToolRunContext,
    readonly cwd: string,
    deps: BuiltinDeps,
  ) {
    this.sandbox = ctx.sandbox;
    this.timeoutMs = ctx.timeoutMs;
    this.run = deps.run;
    this.fetch = deps.fetch;
    this.mqtt = deps.mqtt;
    this.a2a = deps.a2a;
  }
  get signal(): AbortSignal {
    return this.ctx.signal;
  }
}

/** An OS-touching builtin under `level: process`: our own bundle as a worker child. */
async function runInWorker(def: BuiltinDef, deps: BuiltinDeps, w: WorkerCommand, args: Record<string, unknown>, ctx: ToolRunContext, cwd: string): Promise<ToolResult> {
  const request: WorkerRequest = { name: def.name, args, sandbox: ctx.sandbox, cwd, timeoutMs: ctx.timeoutMs };
  const out = await deps.run({
    bin: w.argv0,
    argv: [...w.args, '__builtin'],
    stdin: JSON.stringify(request),
    // The reply is read with the bound worker-reply.ts gives it, not cut at the result's own cap.
    sandbox: withOutputCap(workerProcessSandbox(ctx.sandbox), workerStdoutCap(outputCap(ctx.sandbox))),
    timeoutMs: ctx.timeoutMs,
    signal: ctx.signal,
    cwd,
    readOnlyBinds: w.binds,
  });
  if (out.timedOut || out.aborted) throw new Error(`${def.name} worker stopped (${out.timedOut ? 'timeout' : 'aborted'})`);
  let reply: WorkerReply;
  try {
    reply = decodeWorkerReply(out.stdout);
  } catch {
    throw new Error(`${def.name} worker failed (exit ${out.exitCode ?? out.signal}): ${out.stderr.slice(-500) || 'no output'}`);
  }
  if ('violation' in reply) throw new SandboxViolation(reply.violation.rule, reply.violation.detail);
  if ('error' in reply) throw new Error(reply.error);
  return reply.result;
}
