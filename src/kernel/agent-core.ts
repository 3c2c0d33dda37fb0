// The agent as the kernel's method handlers and capability modules see it (spec §8 lifecycle, §11 method
// table). Apart from agent.ts, which builds its method table from ./methods: the handlers import this file,
// never the agent, so no cycle of value imports runs through the kernel (docs/testing.md "Layers").
import type { SessionAbort } from './session-abort.ts';
import type { JsonRpcNotification } from '../protocol/jsonrpc.ts';
import type { ResolvedManifest } from '../manifest/resolved.ts';
import type { LoadResult } from '../manifest/loader.ts';
import type { Lifecycle, LifecycleState } from './lifecycle.ts';
import type { MethodSpec } from './methods/index.ts';
import type { InflightTracker } from './inflight.ts';
import type { Clock, Logger, TelemetrySink } from './ports.ts';
import type { Level, CapabilityGroup } from './conformance.ts';

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

export interface Session {
  manifest: ResolvedManifest;
  protocolVersion: string;
  level: Level;
  capabilities: Record<string, object>;
  /** Aborted when the session ends: in-flight work that did not drain is cancelled through it. */
  abort: SessionAbort;
}

/** A capability module (tools, memory, swarm…) adds methods and start/stop work to the kernel. */
export interface KernelModule {
  name: string;
  methods?: Record<string, MethodSpec>;
  /** STARTING (spec §8): prepare what this module needs; throw to move the agent to ERROR. */
  start?(session: Session, agent: AgentCore): Promise<void>;
  /** STOPPING (spec §8): release what start acquired. Never throws. */
  stop?(session: Session): Promise<void>;
}

export interface AgentOptions {
  clock: Clock;
  log: Logger;
  /** The runtime configuration (claw.runtime.yaml); the kernel reads only these fields. */
  config: KernelConfig;
  /** Agent → Operator notifications go to every transport. */
  notify: (n: JsonRpcNotification) => void;
  /** The manifest `claw run` was started with: authoritative when present. */
  launchManifest?: ResolvedManifest;
  /** Loads a manifest received in claw.initialize (an object or a claw:// URI). */
  loadWireManifest: (value: unknown, defaultClaw: string) => Promise<LoadResult>;
  modules?: KernelModule[];
  /** Opens the session's telemetry (spec §5.11) before STARTING, so every transition is observed. */
  openTelemetry?: (s: Session) => Promise<TelemetrySink | undefined>;
}

/** What method handlers see of the agent. */
export interface AgentCore {
  readonly opts: AgentOptions;
  readonly lifecycle: Lifecycle;
  readonly inflight: InflightTracker;
  session: Session | undefined;
  readonly modules: readonly KernelModule[];
  /** This session's telemetry; a no-op sink when the manifest declares none. */
  readonly telemetry: TelemetrySink;
  runtimeLevel(): Level;
  supportedGroups(level: Level): CapabilityGroup[];
  startSession(s: Session): Promise<void>;
  stopSession(timeoutMs: number, before?: number): Promise<boolean>;
  snapshot(): { state: LifecycleState; uptime_ms: number };
}

/** The runtime configuration's fields the kernel reads (docs/runtime-config.md); the whole schema lives in src/config. */
export interface KernelConfig {
  heartbeat?: { interval_ms?: number };
  shutdown?: { timeout_ms?: number };
}
