// A builtin tool: bound by name from a manifest Tool (docs/tools.md lists each one's input).
import type { SandboxSpec } from '../../manifest/schema/index.ts';
import type { ToolResult } from '../types.ts';
import type { ProcessRunner } from '../runner-port.ts';
import type { NetworkFetch } from './http-fetch.ts';
import type { MqttToolPort } from './mqtt-port.ts';
import type { A2aPeerPort } from './a2a-port.ts';

export interface BuiltinContext {
  signal: AbortSignal;
  sandbox: SandboxSpec;
  timeoutMs?: number;
  /** Where relative paths resolve and processes start (inside the sandbox's scope). */
  cwd: string;
  run: ProcessRunner;
  fetch: NetworkFetch;
  /** The broker of claw.runtime.yaml `mqtt_tools:` (mqtt-publish, mqtt-read); absent when not configured. */
  mqtt?: MqttToolPort;
  /** The peers of claw.runtime.yaml `a2a.peers` (a2a-send); absent when none are configured. */
  a2a?: A2aPeerPort;
}

export interface BuiltinDef {
  name: string;
  /** Touches the OS (files, processes, network): runs in a child process under `level: process`. */
  touchesOs: boolean;
  isShell?: boolean;
  /** The shape this builtin reads; the manifest's input_schema is checked first (docs/tools.md). */
  inputSchema: Record<string, unknown>;
  /** May answer synchronously (no promise) when it does no I/O, like `echo`. */
  run(args: Record<string, unknown>, ctx: BuiltinContext): ToolResult | Promise<ToolResult>;
  commandLine?(args: Record<string, unknown>, sandbox: SandboxSpec): string | undefined;
}
