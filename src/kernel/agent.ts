// The agent kernel: lifecycle, the method table, and the session a claw.initialize opens.
// It knows ports only; targets/ hand it transports' notify, a clock, a logger and the loader.
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { illFormedPath } from '../protocol/well-formed.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import { Lifecycle, type LifecycleState } from './lifecycle.ts';
import { Heartbeat, DEFAULT_HEARTBEAT_MS } from './heartbeat.ts';
import { InflightTracker } from './inflight.ts';
import type { CallContext, Dispatch } from './router.ts';
import { NO_TELEMETRY, type Clock, type Logger, type TelemetrySink } from './ports.ts';
import { CAPABILITY_GROUPS, manifestLevel, type Level, type CapabilityGroup } from './conformance.ts';
import { CORE_METHODS, type MethodSpec } from './methods/index.ts';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS, type AgentCore, type AgentOptions, type KernelModule, type Session } from './agent-core.ts';

// The agent's contract lives in agent-core.ts, so the method handlers that receive an AgentCore do not import this file
// (which imports them); modules keep importing it from here.
export { DEFAULT_SHUTDOWN_TIMEOUT_MS, type AgentCore, type AgentOptions, type KernelModule, type Session } from './agent-core.ts';

/**
 * The methods of each capability group (spec §11 method table, §9.3.1 capability negotiation), plus
 * this runtime's extension `claw.swarm.result` (docs/swarm.md), which belongs to the swarm group: it
 * is answered exactly when the other swarm methods are.
 */
const GROUP_METHODS: Record<CapabilityGroup, string[]> = {
  tools: ['claw.tool.call', 'claw.tool.approve', 'claw.tool.deny'],
  swarm: ['claw.swarm.delegate', 'claw.swarm.report', 'claw.swarm.broadcast', 'claw.swarm.discover', 'claw.swarm.result'],
  memory: ['claw.memory.query', 'claw.memory.store', 'claw.memory.compact'],
};
const METHOD_GROUP = new Map<string, CapabilityGroup>(
  (Object.entries(GROUP_METHODS) as [CapabilityGroup, string[]][]).flatMap(([g, ms]) => ms.map((m) => [m, g] as [string, CapabilityGroup])),
);

export class Agent implements AgentCore {
  readonly lifecycle: Lifecycle;
  readonly inflight = new InflightTracker();
  readonly modules: readonly KernelModule[];
  session: Session | undefined;
  telemetry: TelemetrySink = NO_TELEMETRY;
  private readonly methods = new Map<string, MethodSpec>();
  private groups: Set<CapabilityGroup> | undefined;
  private readonly heartbeat: Heartbeat;
  private stopping: Promise<boolean> | undefined;
  /** Modules whose start succeeded in this session: the only ones a stop must release. */
  private started: KernelModule[] = [];
  /** A claw.initialize being processed: §9.3.1 says nothing else is processed before its reply. */
  private initializing: Promise<unknown> | undefined;
  /** The last initialize or shutdown, in arrival order. */
  private lifecycleChain: Promise<unknown> | undefined;

  constructor(readonly opts: AgentOptions) {
    this.modules = opts.modules ?? [];
    this.lifecycle = new Lifecycle(
      () => opts.clock.monotonic(),
      (e) => {
        opts.log.info('lifecycle.transition', { event: 'lifecycle.transition', agent: this.agentName(), ...e });
        this.telemetry.emit('lifecycle', 'lifecycle.transition', { ...e });
      },
    );
    this.heartbeat = new Heartbeat(opts.clock, () => this.snapshot(), opts.notify);
    for (const [name, spec] of Object.entries(CORE_METHODS)) this.methods.set(name, spec);
    for (const m of this.modules) for (const [name, spec] of Object.entries(m.methods ?? {})) this.methods.set(name, spec);
  }

  /**
   * The router's entry point: resolve the method, check state and level, run the handler. Returns
   * the handler's own value (or promise): a synchronous handler with nothing to wait for is answered
   * without a promise, and a refusal is thrown synchronously (the router answers both the same way).
   */
  readonly dispatch: Dispatch = (method: string, params: unknown, ctx: CallContext): unknown => {
    const spec = this.methods.get(method);
    if (!spec) throw new ProtocolError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    // One check for every method and every way in (router, swarm): a lone surrogate cannot be stored or
    // read back as it came (protocol/well-formed.ts), so it is refused before anything runs (docs/protocol.md).
    const illFormed = illFormedPath(params);
    if (illFormed !== undefined) {
      throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params: ${illFormed || '(params)'} is not well-formed Unicode (lone UTF-16 surrogate)`, {
        issues: [{ path: illFormed || '(params)', message: 'lone UTF-16 surrogate' }],
      });
    }
    // Requests are processed concurrently, but in arrival order with respect to the lifecycle:
    // §9.3.1 says nothing is processed before initialize's reply, so anything pipelined behind an
    // initialize waits for it; an initialize pipelined behind a shutdown (a new session) waits for that.
    const isInitialize = method === 'claw.initialize';
    const isLifecycle = isInitialize || method === 'claw.shutdown';
    const waitFor = isInitialize ? this.lifecycleChain : this.initializing;
    if (!isLifecycle && !waitFor) return this.run(method, spec, params, ctx);
    const run = (async () => {
      if (waitFor) await waitFor.catch(() => {});
      return this.run(method, spec, params, ctx);
    })();
    if (!isLifecycle) return run;
    this.lifecycleChain = run;
    if (isInitialize) this.initializing = run;
    const clear = () => {
      if (this.initializing === run) this.initializing = undefined;
      if (this.lifecycleChain === run) this.lifecycleChain = undefined;
    };
    run.then(clear, clear);
    return run;
  };

  /** State and level checks (thrown synchronously), then the handler. */
  private run(method: string, spec: MethodSpec, params: unknown, ctx: CallContext): unknown {
    const state = this.lifecycle.state;
    if (!spec.states.includes(state)) {
      // A malformed or unsupported request is answered as such in any state (docs/protocol.md "Lifecycle").
      spec.checkRequest?.(params);
      throw notAllowed(method, state, this.session !== undefined);
    }
    if (spec.level > 1) {
      const level = this.session?.level ?? 1;
      // §11: a method above the agent's conformance level is "not found" for this agent. Level 3 is
      // checked per capability group (docs/protocol.md): a level-3 method is answered when this runtime
      // implements its group and the manifest is level 3 by its primitives, even while another level-3
      // group is not implemented yet (which keeps conformanceLevel itself at level-2).
      if (spec.level > level && !(spec.level === 3 && this.session && this.implemented().has(METHOD_GROUP.get(method)!) && manifestLevel(this.session.manifest) === 3)) {
        throw new ProtocolError(ErrorCode.MethodNotFound, `Method not found: ${method} needs conformance level-${spec.level}, this agent is level-${level}`, {
          conformanceLevel: `level-${level}`,
        });
      }
    }
    return spec.handler(params, ctx, this);
  }

  /** Groups all of whose methods are registered (fixed once constructed). */
  private implemented(): Set<CapabilityGroup> {
    this.groups ??= new Set((Object.keys(GROUP_METHODS) as CapabilityGroup[]).filter((g) => GROUP_METHODS[g].every((m) => this.methods.has(m))));
    return this.groups;
  }

  /** §11: level 2 needs the tools group; level 3 needs every level-3 group (swarm and memory). */
  runtimeLevel(): Level {
    const g = this.implemented();
    if (!g.has('tools')) return 1;
    return (Object.keys(CAPABILITY_GROUPS) as CapabilityGroup[]).every((x) => CAPABILITY_GROUPS[x] < 3 || g.has(x)) ? 3 : 2;
  }

  /**
   * §9.3.1 negotiation is per group: exactly the groups this runtime implements whose level the manifest
   * reaches by its primitives (`level` = manifestLevel of the session's manifest).
   */
  supportedGroups(level: Level): CapabilityGroup[] {
    return (Object.keys(CAPABILITY_GROUPS) as CapabilityGroup[]).filter((g) => CAPABILITY_GROUPS[g] <= level && this.implemented().has(g));
  }

  snapshot(): { state: LifecycleState; uptime_ms: number } {
    return { state: this.lifecycle.state, uptime_ms: this.lifecycle.uptimeMs() };
  }

  async startSession(s: Session): Promise<void> {
    this.session = s; // first, so the STARTING transition event names this session's agent
    this.telemetry = (await this.openTelemetry(s)) ?? NO_TELEMETRY;
    this.lifecycle.to('STARTING');
    this.stopping = undefined;
    this.started = [];
    try {
      for (const m of this.modules) {
        await m.start?.(s, this);
        this.started.push(m);
      }
    } catch (err) {
      for (const m of this.started.reverse()) await m.stop?.(s).catch(() => {});
      this.started = [];
      this.lifecycle.to('ERROR');
      throw err;
    }
    this.lifecycle.to('READY');
    this.heartbeat.start(this.heartbeatInterval(s.manifest));
  }

  /** STOPPING → drain (up to timeoutMs) → module stop → STOPPED. Concurrent callers share one stop. */
  stopSession(timeoutMs: number, before?: number): Promise<boolean> {
    if (this.stopping) return this.stopping;
    this.stopping = (async () => {
      this.heartbeat.stop(); // §9.3.1: no heartbeat once STOPPING begins
      this.lifecycle.to('STOPPING');
      const drained = await this.inflight.drain(timeoutMs, before);
      const s = this.session;
      if (s) {
        s.abort.abort(); // whatever did not drain is cancelled now
        for (const m of this.started.reverse()) {
          await m.stop?.(s).catch((e) => this.opts.log.warn('module stop failed', { module: m.name, error: String(e) }));
        }
      }
      this.started = [];
      this.lifecycle.to('STOPPED');
      const telemetry = this.telemetry;
      this.telemetry = NO_TELEMETRY;
      await telemetry.close().catch(() => {});
      return drained;
    })();
    return this.stopping;
  }

  /** SIGTERM, SIGINT, stdin closed: stop cleanly if a session is running. */
  async shutdown(reason: string): Promise<void> {
    // An initialize (or shutdown) still in flight finishes first; then its session is stopped too.
    while (this.lifecycleChain) await this.lifecycleChain.catch(() => {});
    const state = this.lifecycle.state;
    if (state === 'READY' || state === 'ERROR' || state === 'STOPPING') {
      this.opts.log.info('shutting down', { reason });
      await this.stopSession(this.opts.config.shutdown?.timeout_ms ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
    }
    this.heartbeat.stop();
  }

  /** Telemetry must never gate a session (§5.11): a failure to open it is logged and the agent goes on. */
  private async openTelemetry(s: Session): Promise<TelemetrySink | undefined> {
    try {
      return await this.opts.openTelemetry?.(s);
    } catch (err) {
      this.opts.log.warn('telemetry disabled', { error: String((err as Error)?.message ?? err) });
      return undefined;
    }
  }

  /** Runtime configuration first (this machine's operator), then the manifest annotation, then 30 s. */
  private heartbeatInterval(m: ResolvedManifest): number {
    const fromConfig = this.opts.config.heartbeat?.interval_ms;
    if (fromConfig) return fromConfig;
    const ann = Number(m.annotations.heartbeat_interval_ms);
    return Number.isInteger(ann) && ann > 0 ? ann : DEFAULT_HEARTBEAT_MS;
  }

  private agentName(): string | undefined {
    return this.session?.manifest.identity.name ?? this.opts.launchManifest?.identity.name;
  }
}

function notAllowed(method: string, state: LifecycleState, hadSession: boolean): ProtocolError {
  // JSON-RPC reserves -32000..-32099 for CKP (spec §9.4 forbids custom codes there), so a request in
  // the wrong lifecycle state is an invalid request, with the state in data (docs/protocol.md).
  const why =
    state === 'INIT' || (!hadSession && state !== 'STARTING')
      ? 'send claw.initialize first (spec §9.3.1)'
      : state === 'STOPPED'
        ? 'the session has ended; send claw.initialize to start a new one'
        : `the agent is ${state}`;
  return new ProtocolError(ErrorCode.InvalidRequest, `Invalid request: ${method} is not accepted now: ${why}`, { state });
}
